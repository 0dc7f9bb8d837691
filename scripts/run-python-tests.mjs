#!/usr/bin/env node
// The Python client's tests: `python3 -m unittest discover -s clients/python/tests -v`, output passed
// through, then the counts written to test-results/python.json as {"passed": N, "failed": M}
// (scripts/run-tests.mjs adds them to the npm test summary). Exit code: unittest's.
// PYTHON=python3.9 picks another interpreter.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const reports = path.join(root, 'test-results');
const reportFile = path.join(reports, 'python.json');
const python = process.env.PYTHON || 'python3';
const args = ['-m', 'unittest', 'discover', '-s', 'clients/python/tests', '-v'];

fs.mkdirSync(reports, { recursive: true });
fs.rmSync(reportFile, { force: true });

/** Counts from unittest's closing lines: "Ran N tests in …" then "OK (skipped=s)" or "FAILED (failures=a, errors=b, skipped=c)". */
function parseUnittestSummary(output) {
  const ran = /^Ran (\d+) tests? in /m.exec(output);
  if (!ran) return undefined;
  const total = Number(ran[1]);
  const status = /^(OK|FAILED)(?: \(([^)]*)\))?\s*$/m.exec(output.slice(ran.index));
  const counts = {};
  for (const part of (status?.[2] ?? '').split(',')) {
    const [key, value] = part.split('=').map((s) => s.trim());
    if (key && value !== undefined) counts[key] = Number(value);
  }
  const failed = (counts.failures ?? 0) + (counts.errors ?? 0) + (counts.unexpected_successes ?? 0);
  const skipped = (counts.skipped ?? 0) + (counts.expected_failures ?? 0);
  return { passed: Math.max(0, total - failed - skipped), failed, skipped, ok: status?.[1] === 'OK' };
}

function run() {
  return new Promise((resolve) => {
    const child = spawn(python, args, { cwd: root, env: { ...process.env, PYTHONUNBUFFERED: '1' }, stdio: ['ignore', 'inherit', 'pipe'] });
    let stderr = '';
    // unittest reports on stderr: show it live and keep it for the summary.
    child.stderr.on('data', (chunk) => {
      process.stderr.write(chunk);
      stderr += chunk.toString();
    });
    child.on('error', (error) => resolve({ code: 127, stderr: `${stderr}\n${error.message}` }));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), stderr }));
    for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => child.kill(signal));
  });
}

const { code, stderr } = await run();
const summary = parseUnittestSummary(stderr);
const report = summary ? { passed: summary.passed, failed: summary.failed } : { passed: 0, failed: 1 };
// A crash after the summary (or a non-zero exit without failures) still counts as a failure.
if (code !== 0 && report.failed === 0) report.failed = 1;
fs.writeFileSync(reportFile, `${JSON.stringify(report)}\n`);
console.log(
  `python: ${report.passed} passed, ${report.failed} failed${summary?.skipped ? `, ${summary.skipped} skipped` : ''} → ${path.relative(root, reportFile)}`,
);
process.exit(code);
