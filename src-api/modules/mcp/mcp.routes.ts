import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { RouteOptions } from '../../http/routes';
import { createDirectoryMcpServer } from './mcp.tools';

export const MCP_PATH = '/mcp';

/**
 * `POST /mcp`: the MCP Streamable HTTP transport, stateless (no session id: every request is
 * answered on its own, so any number of processes can serve it) and with JSON answers rather
 * than event streams (the tools answer at once). Each request spends one read of the client's
 * budget, like any REST read (see http/app.ts). GET (a server-to-client stream) is not offered:
 * a stateless server has nothing to push.
 */
export const mcpRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { services }) => {
  app.post(MCP_PATH, { config: { rateLimit: 'reads' }, schema: { hide: true } }, async (request, reply) => {
    const server = createDirectoryMcpServer(services);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    try {
      await server.connect(transport);
      const response = await transport.handleRequest(toWebRequest(request), { parsedBody: request.body });
      return await sendWebResponse(reply, response);
    } finally {
      await server.close();
    }
  });
};

function toWebRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const each of [value].flat()) headers.append(name, each);
  }
  // The body was parsed already (parsedBody); the transport reads only method, URL and headers.
  return new Request(`http://${request.host}${request.url}`, { method: request.method, headers });
}

async function sendWebResponse(reply: FastifyReply, response: Response): Promise<FastifyReply> {
  reply.status(response.status);
  response.headers.forEach((value, name) => {
    if (name !== 'content-length') reply.header(name, value);
  });
  return reply.send(response.body === null ? '' : Buffer.from(await response.arrayBuffer()));
}
