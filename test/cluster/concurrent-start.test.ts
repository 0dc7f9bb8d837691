import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process';
import { makeTempDir } from '../helpers/test-server';
import { bearer, trpcCall } from '../helpers/trpc';

/**
 * Contract section 8: several processes starting at once on an empty database
 * migrate and seed it once. Three real `serve` processes are started together on
 * one new data dir with the demo directory on.
 */
const running: ServeProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop()));
});

describe('several serve processes starting at once on an empty data dir', () => {
  it('all listen, the database is migrated and seeded once, and they share one admin token', async () => {
    const dataDir = makeTempDir('agentdir-concurrent-start-');
    const started = await Promise.allSettled([0, 1, 2].map(() => startServeProcess(['--data-dir', dataDir, '--rate-limit', 'off'])));
    for (const result of started) if (result.status === 'fulfilled') running.push(result.value);
    // Every process listens: none lost a race over the migrations, the seed or the token file.
    expect(started.map((result) => (result.status === 'rejected' ? String(result.reason) : 'listening'))).toEqual([
      'listening',
      'listening',
      'listening',
    ]);

    // One demo directory, not two or three: the same listed count from every process.
    const totals = await Promise.all(
      running.map(async (server) => {
        const response = await fetch(`${server.api}/agents?limit=1`);
        expect(response.status).toBe(200);
        return ((await response.json()) as { total: number }).total;
      }),
    );
    expect(totals[0]).toBeGreaterThan(0);
    expect(new Set(totals).size).toBe(1);

    // One admin token in the file, and every process accepts it.
    const token = fs.readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
    expect(fs.readdirSync(dataDir).filter((name) => name.startsWith('admin-token'))).toEqual(['admin-token']);
    for (const server of running) {
      const answer = await trpcCall(server.origin, 'query', 'session.me', undefined, bearer(token));
      expect(answer.status).toBe(200);
    }
  }, 120_000);
});
