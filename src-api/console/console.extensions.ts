import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../services';
import { consoleWebPlugin, type ConsoleWebOptions } from './console-web.plugin';
import { trpcHttpPlugin } from './trpc-http.plugin';

/** What `serve` mounts at the root next to the REST API: /trpc and the console's web build at /console. */
export function consoleExtensions(services: Services, adminToken: string, options: ConsoleWebOptions = {}): FastifyPluginAsync[] {
  return [trpcHttpPlugin({ services, adminToken }), consoleWebPlugin(options)];
}
