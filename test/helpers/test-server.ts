import { createConfig, type Config, type ConfigOverrides } from '../../src-api/config';
import { openStore } from '../../src-api/db/open-store';
import { createServices, type Services } from '../../src-api/services';
import { startServer, type RunningServer, type StartServerOptions } from '../../src-api/server';
import { makeTempDir } from './temp-dir';
import { databaseOf, onPostgres } from './test-store';

export { makeTempDir } from './temp-dir';

export interface TestServer extends RunningServer {
  dataDir: string;
  /** fetch() against the API base, e.g. api('/agents?limit=5'). */
  api(pathAndQuery: string, init?: RequestInit): Promise<Response>;
  /** POST a JSON body. */
  post(pathAndQuery: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
}

/**
 * A real server on 127.0.0.1 (random port) over a real SQLite file in a temp
 * dir, or with AGENTDIR_TEST_STORE=postgres over a PostgreSQL database of its
 * own (the data dir's: test/helpers/test-store.ts). No demo data and no rate
 * limits unless asked for.
 */
export async function startTestServer(overrides: ConfigOverrides = {}, options: StartServerOptions = {}): Promise<TestServer> {
  const dataDir = overrides.dataDir ?? makeTempDir();
  const databaseUrl = overrides.databaseUrl ?? (onPostgres ? await databaseOf(dataDir) : undefined);
  const config = createConfig({
    ...(databaseUrl !== undefined && { databaseUrl }),
    host: '127.0.0.1',
    port: 0,
    demoData: false,
    adminToken: 'test-admin-token-0123456789',
    ...overrides,
    dataDir,
    rateLimit: { enabled: false, ...overrides.rateLimit },
  });
  const server = await startServer(config, options);
  const api = (pathAndQuery: string, init?: RequestInit) => fetch(`${server.apiBaseUrl}${pathAndQuery}`, init);
  return Object.assign(server, {
    dataDir,
    api,
    post: (pathAndQuery: string, body: unknown, headers: Record<string, string> = {}) =>
      api(pathAndQuery, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }),
  });
}

/**
 * What another process (a `cli` command beside the server) has: its own connection to the same
 * database (SQLite) or its own pool (PostgreSQL), and services over it. Close it when done.
 */
export async function servicesBeside(config: Config): Promise<{ services: Services; close(): Promise<void> }> {
  const database = await openStore(config);
  return { services: createServices({ store: database.store, config }), close: () => database.close() };
}

/** A minimal valid agent for AgentsService.create. */
export function agentInput(
  overrides: Partial<{
    name: string;
    tagline: string;
    description: string;
    author: string;
    capabilities: string[];
    categories: string[];
    type: string;
    source_url: string;
  }> = {},
) {
  const name = overrides.name ?? 'Test Agent';
  return {
    name,
    tagline: overrides.tagline ?? `${name} does things`,
    description: overrides.description ?? `${name} is an agent used in tests.`,
    author: overrides.author ?? 'Test Author',
    capabilities: overrides.capabilities ?? ['testing'],
    categories: overrides.categories ?? ['quality'],
    type: (overrides.type ?? 'coding') as 'coding',
    source_url: overrides.source_url ?? `https://example.com/${encodeURIComponent(name.toLowerCase().replace(/\s+/g, '-'))}`,
  };
}

/** A response body as JSON; tests assert on its shape, so it is typed loosely on purpose. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function json(response: Response): Promise<any> {
  return response.json();
}
