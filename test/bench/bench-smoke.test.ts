import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

/**
 * The benchmark itself is `npm run bench` (100,000 agents, minutes); this
 * smoke run keeps its machinery working: a small directory, one-second loads,
 * every figure measured and reported, none judged.
 */
describe('npm run bench (smoke)', () => {
  it('measures every figure on a small directory and writes the results', () => {
    const result = spawnSync(
      'node',
      ['--import', 'tsx', 'bench/run.ts', '--agents', '500', '--duration', '1', '--connections', '10', '--smoke'],
      {
        cwd: root,
        encoding: 'utf8',
        timeout: 240_000,
      },
    );
    expect(result.status, result.stderr.slice(-2000)).toBe(0);
    expect(result.stdout).toContain('Agent Directory benchmark: 500 agents');

    const report = JSON.parse(fs.readFileSync(path.join(root, 'bench/results/smoke.json'), 'utf8')) as {
      rows: { what: string; measured: string; met: boolean | null }[];
    };
    const measured = new Map(report.rows.map((row) => [row.what, row]));
    for (const figure of [
      'start-up to first 200 from /health',
      'raw node:http, fixed 1 KB JSON (baseline)',
      'GET /agents/{id}',
      'GET /agents/bulk (50 ids)',
      'GET /agents (list pages)',
      'GET /agents/{id}/connections',
      'search over HTTP (GET + POST, mixed, top 20)',
      'raw node:http just before and after the search classes',
      'search class: one common word (cache off)',
      'search class: filtered POST (cache off)',
      'search class: three common words (cache on)',
      'server RSS under load (peak)',
      'typo queries: target in top 5',
      'exact queries: target in top 5',
      'filters respected exactly',
      'search in-process p50 / p99',
      'writes in-process (reviews + agent updates)',
    ]) {
      expect(measured.get(figure)?.measured, figure).toMatch(/\d/);
    }
    // Correctness figures hold at any size: they are judged even in a smoke run.
    expect(measured.get('filters respected exactly')?.met).toBe(true);
    expect(measured.get('new agent findable by the next search')?.met).toBe(true);
    expect(measured.get('search index current after import')?.met).toBe(true);
  }, 300_000);
});
