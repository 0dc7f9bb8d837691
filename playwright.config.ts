import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from '@playwright/test';

/**
 * The console in a real browser (Debian's Chromium) against `npm run serve`
 * on a free port and a fresh data dir. The config is read again in each
 * worker, so the port, folder and token are chosen once and passed on in the
 * environment.
 */
const freePort = () =>
  execFileSync(process.execPath, [
    '-e',
    "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })",
  ])
    .toString()
    .trim();
process.env.AGENTDIR_E2E_PORT ??= freePort();
// A stand-in for GitHub's raw-file host: specs that prove ownership of a GitHub-hosted agent serve the claim file there.
process.env.AGENTDIR_E2E_FORGE_PORT ??= freePort();
process.env.AGENTDIR_E2E_DATA_DIR ??= fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-e2e-'));
process.env.AGENTDIR_E2E_ADMIN_TOKEN ??= `e2e-admin-token-${process.pid}-${Date.now()}`;

const port = Number(process.env.AGENTDIR_E2E_PORT);
const baseURL = `http://127.0.0.1:${port}`;

export default defineConfig({
  testDir: 'test/e2e',
  outputDir: 'test-results/e2e-artifacts',
  fullyParallel: false,
  forbidOnly: !!process.env.CI,
  retries: 0,
  workers: 1,
  // The longest flows take 20-26 s on a quiet machine (webhooks, claims, a developer's whole key-and-webhook
  // round); 30 s left too little room for a loaded one.
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [['list'], ['json', { outputFile: process.env.PLAYWRIGHT_JSON_OUTPUT_NAME ?? 'test-results/playwright.json' }]],
  globalTeardown: './test/e2e/global-teardown.ts',
  use: {
    baseURL,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    viewport: { width: 1280, height: 800 },
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    },
  },
  projects: [{ name: 'chromium' }],
  webServer: {
    // `npm run serve` builds the console first when out/web is missing or stale (preserve).
    // Every spec writes from 127.0.0.1: per-client limits and quotas (5 pending submissions per client) would make
    // the specs depend on each other's leftovers; the API tests cover the limits.
    command: `npm run serve -- --port ${port} --data-dir ${process.env.AGENTDIR_E2E_DATA_DIR} --allow-private-urls --rate-limit off`,
    url: `${baseURL}/api/v1/health`,
    env: {
      AGENTDIR_ADMIN_TOKEN: process.env.AGENTDIR_E2E_ADMIN_TOKEN,
      AGENTDIR_FORGE_RAW_BASES: JSON.stringify({ 'github.com': `http://127.0.0.1:${process.env.AGENTDIR_E2E_FORGE_PORT}/gh` }),
    },
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: 'ignore',
    stderr: 'pipe',
  },
});
