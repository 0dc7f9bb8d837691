import type { FastifyReply } from 'fastify';

/**
 * Sends JSON (text or UTF-8 bytes) the service already wrote in the shape of
 * the route's response schema (profiles from the profile cache, made by the
 * `Agent` schema's own serializer). A string or Buffer with a JSON content
 * type goes out as is, without a second serialization; the schema still documents the route,
 * and tests compare the text with what the schema's serializer writes.
 * Returns the reply typed as the schema's value, so the route type-checks.
 */
export function sendJson<T>(reply: FastifyReply, json: string | Buffer): T {
  return reply.type('application/json; charset=utf-8').send(json) as unknown as T;
}
