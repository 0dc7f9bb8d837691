import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Answers that go out while the request's body is still arriving (a 413 for a body over the limit,
 * a 401 or 429 decided from the headers) must reach the client whole.
 *
 * Closing a socket that still has unread bytes makes the kernel send a reset, and a client that is
 * still uploading then fails on its send (curl's exit 55) or loses the answer it has not read yet.
 * So the rest of the body is read and dropped instead: the connection stays open for the next
 * request when the client asked for keep-alive, and is half-closed after the answer when it did not.
 * The request deadline (transport.requestTimeoutMs, counted from the request's start) bounds a slow
 * upload, a byte limit a fast one.
 */

/** Past this much dropped body the socket is cut: a client's honest mistake (a file posted by error) is smaller. */
const DRAIN_LIMIT_BYTES = 16 * 1024 * 1024;

/**
 * Called by every early answer (sendProblem: 413, 415, 401, 429, 400 Host, 405) before it is sent;
 * answers to a request whose body has all arrived are untouched.
 */
export function drainUnreadBody(reply: FastifyReply): void {
  if (bodyStillArriving(reply.request)) drainRestOfBody(reply);
}

/** An answer given from the headers alone can come before Node has marked even an empty request complete. */
function bodyStillArriving(request: FastifyRequest): boolean {
  if (request.raw.complete) return false;
  const { 'transfer-encoding': chunked, 'content-length': length } = request.headers;
  return chunked !== undefined || Number(length) > 0;
}

/** Sockets whose request has had its answer while its body is still being dropped. */
const answeredWhileDraining = new WeakSet<Socket>();

/** True while `socket`'s request is answered but its body not yet all read: a deadline then needs no second answer. */
export function isAnsweredWhileDraining(socket: Socket): boolean {
  return answeredWhileDraining.has(socket);
}

function drainRestOfBody(reply: FastifyReply): void {
  const { request } = reply;
  // Fastify asks for a close after a body error "as the client may send more data"; the drain reads that data.
  if (reply.getHeader('connection') === 'close') reply.removeHeader('connection');
  const socket = request.raw.socket;
  lingerOnClose(socket);
  answeredWhileDraining.add(socket);
  // Node stops watching the request deadline once the request is answered, so the drain keeps it itself
  // (0 is Node's "no deadline"; the drain limit still bounds the bytes).
  const { requestTimeout } = reply.server.server;
  const deadline = requestTimeout > 0 ? setTimeout(() => socket.destroy(), Math.max(0, requestTimeout - reply.elapsedTime)) : undefined;
  deadline?.unref();
  const stop = () => {
    clearTimeout(deadline);
    answeredWhileDraining.delete(socket);
    // A keep-alive socket may drain many requests: it keeps no listener of one that is over.
    socket.off('close', stop);
  };
  request.raw.once('end', stop);
  socket.once('close', stop);
  let dropped = 0;
  // A listener also resumes a body Fastify's reader paused mid-way (a chunked body over the limit).
  request.raw.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DRAIN_LIMIT_BYTES) socket.destroy();
  });
}

/**
 * Node ends a connection after its last answer with destroySoon(): end, then destroy once written,
 * unread bytes or not. Half-closing alone lets the client finish its upload and read the answer; the
 * socket then closes when the client ends its side, or at the idle deadline (connectionTimeout).
 */
function lingerOnClose(socket: Socket): void {
  socket.destroySoon = () => {
    if (socket.writable) socket.end();
  };
}

/**
 * A client that asks before it uploads (`Expect: 100-continue`, as curl does past 1 MiB) is told 413 in
 * place of 100 Continue when its Content-Length is over the limit, and so never sends the body; every
 * other such request gets its 100 Continue, as Node sends it when nobody listens for `checkContinue`.
 */
export function installExpectContinue(app: FastifyInstance, bodyLimitBytes: number): void {
  app.server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    if (!(Number(request.headers['content-length']) > bodyLimitBytes)) response.writeContinue();
    app.routing(request, response);
  });
}
