/**
 * The same requests through this checkout's app and another's (`--base DIR`, node_modules linked), by
 * `app.inject`: status, headers (bar Date) and body compared, differences printed. For changes to the
 * per-request HTTP layer (CORS, Host check, 405s) that must not change an answer. Not a test.
 *
 *   npx tsx bench/http-headers-ab.ts --base /tmp/base [--time]
 *
 * `--time`: then µs per injected request of a cheap API answer (a search on an empty directory, with an
 * Origin), both apps in alternating rounds: the per-request HTTP layer is most of it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const at = process.argv.indexOf('--base');
const baseDir = at > 0 ? process.argv[at + 1] : undefined;
if (!baseDir) throw new Error('--base DIR is required');

const dataDirs: string[] = [];

async function app(dir: string) {
  const { createConfig, databasePath } = (await import(path.join(dir, 'src-api/config.ts'))) as typeof import('../src-api/config');
  const { openDatabase } = (await import(path.join(dir, 'src-api/db/client.ts'))) as typeof import('../src-api/db/client');
  const { createServices } = (await import(path.join(dir, 'src-api/services.ts'))) as typeof import('../src-api/services');
  const { buildApp } = (await import(path.join(dir, 'src-api/http/app.ts'))) as typeof import('../src-api/http/app');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-headers-ab-'));
  dataDirs.push(dataDir);
  const config = createConfig({ dataDir, demoData: false });
  const services = createServices({ db: openDatabase(databasePath(config)), config });
  return buildApp({ services, config, adminToken: 'x'.repeat(32) });
}

const origin = 'https://client.example';
const preflight = { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' };
type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'OPTIONS' | 'PATCH';
const requests: { method: Method; url: string; headers?: Record<string, string>; payload?: string }[] = [];
const urls = [
  '/', '/health', '/api', '/api/v1', '/api/v1/', '/api/v1x', '/api/v1/agents', '/api/v1/agents/', '/api/v1/agents?limit=1',
  '/api/v1/agents?limit=1000', '/api/v1/agents/search?q=x', '/api/v1/agents/search/', '/api/v1/agents/nope',
  '/api/v1/agents/nope/reviews', '/api/v1/me', '/api/v1/me/', '/api/v1/me/keys', '/api/v1/mexico', '/api/v1/accounts',
  '/api/v1/sessions', '/api/v1/sessions/x', '/trpc/stats.overview', '/api/v1//agents', '/api/v1/agents//', '/api/v1?x=/me',
  '/api/v1/openapi.json', '/nope', '/api/v1/agents/%zz',
];
for (const url of urls) {
  for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS'] as const) {
    requests.push({ method, url });
    requests.push({ method, url, headers: { origin } });
  }
  requests.push({ method: 'OPTIONS', url, headers: preflight });
  requests.push({ method: 'POST', url, headers: { origin, 'content-type': 'application/json' }, payload: '{"query":"x"}' });
  requests.push({ method: 'GET', url, headers: { origin, vary: 'x' } });
}

const [mine, base] = [await app(process.cwd()), await app(baseDir)];
let differences = 0;
for (const request of requests) {
  const [a, b] = [await mine.inject(request), await base.inject(request)];
  const headers = (h: Record<string, unknown>) => JSON.stringify(Object.entries(h).filter(([k]) => k !== 'date').sort());
  const same = a.statusCode === b.statusCode && headers(a.headers) === headers(b.headers) && a.body === b.body;
  if (!same) {
    differences++;
    console.log(request.method, request.url, JSON.stringify(request.headers ?? {}));
    console.log('  this', a.statusCode, headers(a.headers), a.body.slice(0, 200));
    console.log('  base', b.statusCode, headers(b.headers), b.body.slice(0, 200));
  }
}
console.log(`${requests.length} requests, ${differences} different`);
if (process.argv.includes('--time')) {
  const { performance } = await import('node:perf_hooks');
  const cheap = { method: 'GET' as const, url: '/api/v1/agents/search?q=x', headers: { origin } };
  const best = { this: Infinity, base: Infinity };
  for (let round = 0; round < 8; round++) {
    for (const [name, target] of [['this', mine], ['base', base]] as const) {
      const start = performance.now();
      for (let i = 0; i < 3_000; i++) await target.inject(cheap);
      best[name] = Math.min(best[name], ((performance.now() - start) * 1000) / 3_000);
    }
  }
  console.log(`µs per request (best of 8 rounds of 3,000): this ${best.this.toFixed(1)}, base ${best.base.toFixed(1)}, ratio ${(best.this / best.base).toFixed(3)}, load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
}
await mine.close();
await base.close();
for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
