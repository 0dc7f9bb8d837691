#!/usr/bin/env node
// `npm test`: every suite (vitest: unit, API, webhook, CLI; Playwright: console in
// Chromium), each with a JSON report, then one closing line "N passed, N failed".
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const reports = path.join(root, 'test-results');
fs.mkdirSync(reports, { recursive: true });

const suites = [
  {
    name: 'vitest',
    command: ['npx', 'vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${path.join(reports, 'vitest.json')}`],
    count: (report) => ({ passed: report.numPassedTests, failed: report.numFailedTests }),
    report: 'vitest.json',
  },
];
if (fs.existsSync(path.join(root, 'playwright.config.ts'))) {
  suites.push({
    name: 'playwright',
    command: ['npx', 'playwright', 'test'],
    env: { PLAYWRIGHT_JSON_OUTPUT_NAME: path.join(reports, 'playwright.json') },
    count: (report) => ({ passed: report.stats.expected + report.stats.flaky, failed: report.stats.unexpected }),
    report: 'playwright.json',
  });
}
if (fs.existsSync(path.join(root, 'clients/python/tests'))) {
  suites.push({ name: 'python', command: ['node', 'scripts/run-python-tests.mjs'], report: 'python.json', count: (report) => report });
}

let passed = 0;
let failed = 0;
for (const suite of suites) {
  const reportFile = path.join(reports, suite.report);
  fs.rmSync(reportFile, { force: true });
  console.log(`\n▶ ${suite.name}: ${suite.command.join(' ')}`);
  const result = spawnSync(suite.command[0], suite.command.slice(1), {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, ...suite.env },
  });
  let counts;
  try {
    counts = suite.count(JSON.parse(fs.readFileSync(reportFile, 'utf8')));
  } catch {
    // No report means the runner itself failed before running tests.
    counts = { passed: 0, failed: 1 };
  }
  if (result.status !== 0 && counts.failed === 0) counts.failed = 1;
  console.log(`${suite.name}: ${counts.passed} passed, ${counts.failed} failed`);
  passed += counts.passed;
  failed += counts.failed;
}

console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
