import fs from 'node:fs/promises';
import path from 'node:path';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { problem, sendProblem } from '../http/problem';
import { projectPath } from '../lib/project-root';
import { CONSOLE_CSP } from './csp';

export const CONSOLE_PREFIX = '/console';
export const DASHBOARD_PREFIX = '/dashboard';

/**
 * The two apps of the web build (vite.web.config.ts): the moderator console
 * and the developer dashboard. One build, one folder: the dashboard's page is
 * dashboard/index.html and its scripts and styles are the shared files under
 * /console/assets/.
 */
const WEB_APPS = [
  { prefix: CONSOLE_PREFIX, page: 'index.html', title: 'console', servesFiles: true },
  { prefix: DASHBOARD_PREFIX, page: 'dashboard/index.html', title: 'developer dashboard', servesFiles: false },
] as const;

/** Where `npm run build:web` writes the console (vite.web.config.ts); found the same from the sources and from out/api. */
export function defaultWebRoot(): string {
  return projectPath('out', 'web');
}

export interface ConsoleWebOptions {
  /** Folder of the web build; defaults to out/web of the project. */
  webRoot?: string;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

const notBuiltPage = (title: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Not built</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#1f2937}code{background:#f3f4f6;padding:.1rem .3rem;border-radius:4px}</style>
</head><body><h1>The ${title} has not been built yet</h1>
<p>This server serves the ${title}'s web build from <code>out/web</code>, and there is none.
Run <code>npm run build:web</code> in the repository, then reload this page.
(<code>npm run serve</code> builds it by itself when it is missing.)</p>
<p>The REST API works regardless: <a href="/api/v1/docs">/api/v1/docs</a>.</p></body></html>
`;

/**
 * The web build: the console at /console (static files, and index.html for
 * any other path below it so that the client-side router can take over) and
 * the dashboard at /dashboard (its page for any path below it).
 */
export function consoleWebPlugin({ webRoot = defaultWebRoot() }: ConsoleWebOptions = {}): FastifyPluginAsync {
  const root = path.resolve(webRoot);

  return async (scope) => {
    scope.addHook('onSend', async (_request, reply) => {
      reply.header('Content-Security-Policy', CONSOLE_CSP);
      reply.header('X-Frame-Options', 'DENY');
      reply.header('Referrer-Policy', 'no-referrer');
      reply.header('Cross-Origin-Opener-Policy', 'same-origin');
    });

    for (const app of WEB_APPS) {
      const pageFile = path.join(root, app.page);
      const serve = async (relative: string, reply: FastifyReply) => {
        if (!(await isFile(pageFile))) {
          return reply.status(503).header('Cache-Control', 'no-store').type('text/html; charset=utf-8').send(notBuiltPage(app.title));
        }
        const file = path.resolve(root, `.${path.posix.sep}${relative}`);
        const inside = file === root || file.startsWith(`${root}${path.sep}`);
        if (app.servesFiles && inside && relative !== '' && !relative.includes('\0') && (await isFile(file))) {
          return sendFile(reply, file, relative.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
        }
        // A missing file (it has an extension) is a 404; anything else is a route of the app.
        if (path.posix.extname(relative) !== '') {
          return sendProblem(reply, problem(404, 'not_found', 'Not found', `No ${app.title} file ${app.prefix}/${relative}`));
        }
        return sendFile(reply, pageFile, 'no-cache');
      };

      scope.get(app.prefix, { schema: { hide: true } }, async (_request, reply) => serve('', reply));
      scope.get(`${app.prefix}/*`, { schema: { hide: true } }, async (request, reply) =>
        serve((request.params as { '*': string })['*'], reply),
      );
    }
  };
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
}

async function sendFile(reply: FastifyReply, file: string, cacheControl: string): Promise<FastifyReply> {
  const body = await fs.readFile(file);
  const type = CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
  return reply.header('Cache-Control', cacheControl).type(type).send(body);
}
