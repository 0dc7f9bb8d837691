import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, startTestServer, type TestServer } from '../helpers/test-server';

/**
 * The live OpenAPI document, checked by the outside tools named in contract section 2: Spectral
 * (`spectral:oas`) and Redocly (`recommended`) must report no errors. Warnings are printed.
 */
const run = promisify(execFile);
const bin = (name: string) => path.resolve('node_modules', '.bin', name);

let server: TestServer;
let documentFile: string;
let dir: string;

beforeAll(async () => {
  server = await startTestServer();
  dir = makeTempDir('agentdir-openapi-');
  documentFile = path.join(dir, 'openapi.json');
  fs.writeFileSync(documentFile, JSON.stringify(await (await server.api('/openapi.json')).json(), null, 2));
});
afterAll(async () => {
  await server.close();
});

/** Runs a CLI that may exit non-zero when it finds problems; returns its stdout either way. */
async function output(file: string, args: string[]): Promise<string> {
  try {
    return (await run(file, args, { maxBuffer: 32 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1', REDOCLY_TELEMETRY: 'off' } }))
      .stdout;
  } catch (error) {
    const stdout = (error as { stdout?: string }).stdout;
    if (typeof stdout === 'string' && stdout.trim()) return stdout;
    throw error;
  }
}

// The document is JSON read back from disk; its shape is what the assertions check.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

describe('OpenAPI lint', () => {
  it('has no Spectral (spectral:oas) errors', async () => {
    const ruleset = path.join(dir, '.spectral.yaml');
    fs.writeFileSync(ruleset, 'extends: ["spectral:oas"]\n');
    const results = JSON.parse(await output(bin('spectral'), ['lint', '-r', ruleset, '-f', 'json', '--quiet', documentFile])) as Array<{
      code: string;
      message: string;
      severity: number;
      path: string[];
    }>;
    const errors = results.filter((result) => result.severity === 0);
    const warnings = results.filter((result) => result.severity === 1);
    console.log(`Spectral: ${errors.length} errors, ${warnings.length} warnings (${[...new Set(warnings.map((w) => w.code))].join(', ')})`);
    expect(errors.map((error) => `${error.code} at ${error.path.join('.')}: ${error.message}`)).toEqual([]);
  }, 120_000);

  it('has no Redocly (recommended) errors', async () => {
    const report = JSON.parse(await output(bin('redocly'), ['lint', '--extends', 'recommended', '--format', 'json', documentFile])) as {
      totals: { errors: number; warnings: number };
      problems: Array<{ ruleId: string; message: string; severity: string }>;
    };
    const errors = report.problems.filter((problem) => problem.severity === 'error');
    const warnings = report.problems.filter((problem) => problem.severity === 'warn');
    console.log(
      `Redocly: ${errors.length} errors, ${warnings.length} warnings (${[...new Set(warnings.map((w) => w.ruleId))].join(', ')})`,
    );
    expect(errors.map((error) => `${error.ruleId}: ${error.message}`)).toEqual([]);
    expect(report.totals.errors).toBe(0);
  }, 120_000);

  it('documents problem+json errors, operation ids, tags, limit headers and optional security', async () => {
    const document = JSON.parse(fs.readFileSync(documentFile, 'utf8'));
    const declaredTags = new Set(document.tags.map((tag: { name: string }) => tag.name));
    const ids = new Set<string>();
    for (const [route, item] of Object.entries(document.paths as Record<string, Record<string, Loose>>)) {
      for (const [method, operation] of Object.entries(item)) {
        expect(operation.operationId, `${method} ${route}`).toMatch(/^[a-z][A-Za-z0-9]+$/);
        expect(ids.has(operation.operationId)).toBe(false);
        ids.add(operation.operationId);
        for (const tag of operation.tags) expect(declaredTags.has(tag)).toBe(true);
        // Routes that say nothing are anonymous or a key; account routes declare their own (session, key).
        expect(operation.security.length).toBeGreaterThan(0);
        for (const [status, response] of Object.entries(operation.responses as Record<string, Loose>)) {
          expect(response.description).not.toBe('Default Response');
          if (Number(status) >= 400) expect(Object.keys(response.content)).toEqual(['application/problem+json']);
        }
      }
    }
    expect(document.paths['/api/v1/agents'].get.security).toEqual([{}, { bearerKey: [] }, { headerKey: [] }]);
    const list = document.paths['/api/v1/agents'].get.responses;
    expect(Object.keys(list['200'].headers).sort()).toEqual(['Link', 'RateLimit', 'RateLimit-Policy']);
    expect(Object.keys(list['429'].headers).sort()).toEqual(['RateLimit', 'RateLimit-Policy', 'Retry-After']);
    expect(JSON.stringify(document)).not.toContain('"$id"');
  });
});
