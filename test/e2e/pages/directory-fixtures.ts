import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, type APIRequestContext, type Page } from '@playwright/test';
import { settled } from './console-api';

/**
 * What the agents, marketing and overview specs share: a signed-in console,
 * the console's tRPC API and the public REST API as a client sees them, and
 * agents of their own (imported with the CLI into the server's data dir, as
 * an operator would; the server picks them up without a restart).
 */

const adminToken = () => process.env.AGENTDIR_E2E_ADMIN_TOKEN!;
export const SCREENSHOTS = path.join('test-results', 'screenshots');

export function screenshotPath(name: string): string {
  return path.join(SCREENSHOTS, `${name}.png`);
}

/** The console's tab keeps the admin token in sessionStorage: put it there before the first script runs. */
export async function signInAsModerator(page: Page): Promise<void> {
  // A script string: this file is type-checked without the DOM library.
  await page.addInitScript(`window.sessionStorage.setItem('agent-directory.admin-token', ${JSON.stringify(adminToken())});`);
}

/** A unique suffix per test run, so records never collide with another run's or another spec's. */
export function uniqueSuffix(): string {
  return `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
}

/** Calls the console's tRPC API as the web build does. */
export async function trpc<T>(
  request: APIRequestContext,
  procedure: string,
  input?: unknown,
  kind: 'query' | 'mutation' = 'query',
): Promise<T> {
  const headers = { authorization: `Bearer ${adminToken()}` };
  const response =
    kind === 'query'
      ? await request.get(`/trpc/${procedure}${input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`}`, {
          headers,
        })
      : await request.post(`/trpc/${procedure}`, { headers, data: input ?? {} });
  expect(response.status(), await response.text()).toBe(200);
  return (await response.json()).result.data as T;
}

export interface AuditEntry {
  actor: string;
  action: string;
  entityType: string;
  entityId: string;
  before: unknown;
  after: unknown;
}

/** The audit log of one record, newest first. */
export async function auditOf(request: APIRequestContext, entityId: string): Promise<AuditEntry[]> {
  return (await trpc<{ entries: AuditEntry[] }>(request, 'audit.list', { entityId, limit: 50 })).entries;
}

/** GET on the public REST API; returns the status and the JSON body. */
export async function publicApi<T = Record<string, unknown>>(
  request: APIRequestContext,
  pathAndQuery: string,
): Promise<{ status: number; body: T }> {
  const response = await request.get(`/api/v1${pathAndQuery}`);
  return { status: response.status(), body: (await response.json()) as T };
}

export interface AgentRecord {
  id: string;
  name: string;
  tagline: string;
  source_url: string;
  description?: string;
  author?: string;
  capabilities?: string[];
  categories?: string[];
  type?: string;
}

/**
 * Imports agents into the running server's data dir with `npm run cli -- import`,
 * the way an operator adds them. `emitEvents` records agent.registered events,
 * which generate marketing posts and an A/B test per agent.
 */
export function importAgents(records: AgentRecord[], options: { emitEvents?: boolean } = {}): void {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-e2e-import-')), 'agents.jsonl');
  fs.writeFileSync(file, records.map((record) => JSON.stringify(record)).join('\n'));
  try {
    execFileSync(
      process.execPath,
      [
        path.join('node_modules', 'tsx', 'dist', 'cli.mjs'),
        'src-api/cli.ts',
        'import',
        file,
        '--data-dir',
        process.env.AGENTDIR_E2E_DATA_DIR!,
        ...(options.emitEvents ? ['--emit-events'] : []),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 },
    );
  } finally {
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
}

/** A made-up agent with a unique id, name and source. */
export function testAgent(label: string, suffix = uniqueSuffix()): AgentRecord {
  const slug = `${label.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${suffix}`;
  return {
    id: `e2e-${slug}`,
    name: `E2E ${label} ${suffix}`,
    tagline: `An agent made by the end-to-end tests (${label})`,
    description: 'Created by the Playwright suite to be edited, verified and unlisted.',
    author: 'E2E Suite',
    capabilities: ['testing'],
    categories: ['quality'],
    type: 'coding',
    source_url: `https://e2e.example.com/${slug}`,
  };
}

/**
 * A screenshot of the whole screen: the console scrolls inside its layout, so
 * the viewport grows to the content's height for the shot, then shrinks back.
 */
export async function screenshotScreen(page: Page, name: string): Promise<void> {
  const size = page.viewportSize()!;
  const height = (await page.evaluate(
    `Math.max(window.innerHeight, document.documentElement.scrollHeight, ...[...document.querySelectorAll('.n-layout-scroll-container')].map((el) => el.scrollHeight))`,
  )) as number;
  if (height > size.height) await page.setViewportSize({ width: size.width, height: Math.min(height, 4000) });
  await settled(page);
  await page.screenshot({ path: screenshotPath(name) });
  if (height > size.height) await page.setViewportSize(size);
}

/** Collects script errors and console errors (a CSP violation shows up as one) from now on. */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return errors;
}

/** A chart wrapper that drew something: a canvas, and a positive sum of its data (data-points). */
export async function expectChartDrawn(page: Page, testId: string): Promise<number> {
  const chart = page.getByTestId(testId);
  await expect(chart.locator('canvas').first()).toBeVisible();
  const points = Number(await chart.getAttribute('data-points'));
  expect(points, `${testId} has data`).toBeGreaterThan(0);
  return points;
}
