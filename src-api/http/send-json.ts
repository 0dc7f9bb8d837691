import type { FastifyReply } from 'fastify';

/**
 * Sends JSON (text or UTF-8 bytes) the service already wrote in the shape of
 * the route's response schema (profiles from the profile cache, made by the
 * `Agent` schema's own serializer). A string or Buffer with a JSON content
 * type goes out as is, without a second serialization; the schema still documents the route,
 * and tests compare the text with what the schema's serializer writes.
 *
 * Returns what the route's async handler returns, typed as the schema's value so the route
 * type-checks: nothing once the answer is out (the API's onSend hooks are callbacks, so `send`
 * ends the response at once), else the reply, which Fastify waits for (search's, whose answers
 * leave at the end of the event loop's turn: `installAnswerBatching`). Returning the reply
 * every time cost each request a `then` looked up on it and a promise job that calls it
 * (about 1.5 % of a search request's CPU): the reply is a thenable.
 */
export function sendJson<T>(reply: FastifyReply, json: string | Buffer): T {
  reply.type('application/json; charset=utf-8').send(json);
  return (reply.sent ? undefined : reply) as unknown as T;
}
