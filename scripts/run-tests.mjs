#!/usr/bin/env node
// `npm test`: every suite (vitest: unit, API, webhook, CLI, and the API, webhook and CLI suites again on
// PostgreSQL; Playwright: console in Chromium), each with a JSON report, then the failures again (name and first lines)
// and one closing line "N passed, N failed".
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';

const root = path.resolve(import.meta.dirname, '..');
const reports = path.join(root, 'test-results');
fs.mkdirSync(reports, { recursive: true });

/**
 * What runs a second time on PostgreSQL (AGENTDIR_TEST_STORE=postgres): about 5 minutes, and the CLI suite
 * (test/cli alone: 233 s at load 12, its CLI child processes). vitest keeps the files whose path contains a
 * filter: 'test/cli/', as 'test/cli' would take test/clients too.
 */
const POSTGRES_SUITES = ['test/api', 'test/webhooks', 'test/cli/'];

const suites = [
  {
    name: 'vitest',
    command: ['npx', 'vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${path.join(reports, 'vitest.json')}`],
    count: (report) => ({ passed: report.numPassedTests, failed: report.numFailedTests }),
    failures: vitestFailures,
    report: 'vitest.json',
  },
  {
    // Contract section 8: the contract suites (test/api, bad input included), the webhook and the CLI suites once more on PostgreSQL 15.
    // test/global-setup.ts starts one server for the run; each test server gets a fresh database.
    name: 'vitest on PostgreSQL',
    command: [
      'npx',
      'vitest',
      'run',
      ...POSTGRES_SUITES,
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${path.join(reports, 'vitest-postgres.json')}`,
    ],
    env: { AGENTDIR_TEST_STORE: 'postgres' },
    count: (report) => ({ passed: report.numPassedTests, failed: report.numFailedTests }),
    failures: vitestFailures,
    report: 'vitest-postgres.json',
  },
];
if (fs.existsSync(path.join(root, 'playwright.config.ts'))) {
  suites.push({
    name: 'playwright',
    command: ['npx', 'playwright', 'test'],
    env: { PLAYWRIGHT_JSON_OUTPUT_NAME: path.join(reports, 'playwright.json') },
    count: (report) => ({ passed: report.stats.expected + report.stats.flaky, failed: report.stats.unexpected }),
    failures: playwrightFailures,
    report: 'playwright.json',
  });
}
if (fs.existsSync(path.join(root, 'clients/python/tests'))) {
  suites.push({ name: 'python', command: ['node', 'scripts/run-python-tests.mjs'], report: 'python.json', count: (report) => report });
}

/** The first lines of an error message: enough to name the cause in a CI log's tail. */
function firstLines(text, lines = 6) {
  return stripVTControlCharacters(String(text ?? ''))
    .split('\n')
    .slice(0, lines)
    .map((line) => `    ${line}`)
    .join('\n');
}

/** Failed tests (and files that failed outside any test, such as a hook) of a vitest JSON report. */
function vitestFailures(report) {
  const found = [];
  for (const file of report.testResults ?? []) {
    const name = path.relative(root, file.name);
    const failedTests = (file.assertionResults ?? []).filter((test) => test.status === 'failed');
    for (const test of failedTests) {
      found.push(`${name} › ${[...(test.ancestorTitles ?? []), test.title].join(' › ')} (${Math.round(test.duration ?? 0)} ms)\n${firstLines(test.failureMessages?.[0])}`);
    }
    if (file.status === 'failed' && failedTests.length === 0) found.push(`${name}\n${firstLines(file.message)}`);
  }
  return found;
}

/** Tests that failed (or passed only on retry) in a Playwright JSON report, and its global errors. */
function playwrightFailures(report) {
  const found = [];
  const walk = (suite, titles) => {
    for (const spec of suite.specs ?? []) {
      for (const test of spec.tests ?? []) {
        if (test.status !== 'unexpected' && test.status !== 'flaky') continue;
        const error = test.results?.find((result) => result.error)?.error;
        found.push(`${spec.file}:${spec.line} › ${[...titles, spec.title].join(' › ')} (${test.status})\n${firstLines(error?.message)}`);
      }
    }
    for (const child of suite.suites ?? []) walk(child, [...titles, child.title]);
  };
  for (const suite of report.suites ?? []) walk(suite, []);
  for (const error of report.errors ?? []) found.push(`(outside any test)\n${firstLines(error.message)}`);
  return found;
}

let passed = 0;
let failed = 0;
const failures = [];
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
    const report = JSON.parse(fs.readFileSync(reportFile, 'utf8'));
    counts = suite.count(report);
    for (const failure of suite.failures?.(report) ?? []) failures.push(`${suite.name}: ${failure}`);
  } catch {
    // No report means the runner itself failed before running tests.
    counts = { passed: 0, failed: 1 };
  }
  if (result.status !== 0 && counts.failed === 0) counts.failed = 1;
  console.log(`${suite.name}: ${counts.passed} passed, ${counts.failed} failed`);
  passed += counts.passed;
  failed += counts.failed;
}

// Repeated last, so that the tail of a long CI log says what failed and why.
if (failures.length > 0) console.log(`\nFailed:\n${failures.join('\n')}`);
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
