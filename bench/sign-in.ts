/**
 * Sign-in latency over HTTP against the compiled server, beside its baseline: one argon2id
 * verification with the server's parameters, measured in this process in the same run.
 *
 *   npx tsx bench/sign-in.ts [--rounds 30]
 *
 * Three classes, interleaved so that load changes hit them alike: the right password, a wrong
 * password for a known address, and an unknown address (which spends a dummy verification, so
 * that it cannot be told apart by time). Each class is reported on its own (median, p90) with its
 * ratio to the baseline, and the unknown/known ratio that says whether the time gives addresses
 * away. The server runs with --rate-limit off: the sign-in limiter (10 failures) is a test of its own.
 * Writes bench/results/sign-in.json.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { hash, verify } from '@node-rs/argon2';
import { Command } from 'commander';

const root = path.resolve(import.meta.dirname, '..');
const options = new Command('bench-sign-in')
  .option('--rounds <n>', 'sign-ins per class', (v) => Number(v), 30)
  .parse()
  .opts<{ rounds: number }>();

/** The server's parameters (src-api/modules/accounts/passwords.ts). */
const ARGON2_OPTIONS = { memoryCost: 19_456, timeCost: 2, parallelism: 1, algorithm: 2 } as const;
const EMAIL = 'bench-sign-in@example.test';
const PASSWORD = 'correct horse battery staple 42';

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};
const round = (value: number) => Math.round(value * 10) / 10;

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-bench-sign-in-'));
  let server: ChildProcess | undefined;
  try {
    execFileSync(process.execPath, ['scripts/ensure-build.mjs', 'api'], { cwd: root, stdio: 'inherit', timeout: 600_000 });
    execFileSync(
      process.execPath,
      ['out/api/cli.js', 'accounts', 'create', '--email', EMAIL, '--name', 'Bench', '--password-stdin', '--data-dir', dataDir],
      { cwd: root, input: PASSWORD, stdio: ['pipe', 'ignore', 'inherit'], timeout: 60_000 },
    );
    const port = await freePort();
    server = spawn(process.execPath, ['out/api/serve.js', '--port', String(port), '--data-dir', dataDir, '--rate-limit', 'off'], {
      cwd: root,
      stdio: 'ignore',
    });
    const origin = `http://127.0.0.1:${port}`;
    for (let attempt = 0; ; attempt++) {
      if ((await fetch(`${origin}/api/v1/health`).catch(() => null))?.ok) break;
      if (attempt > 200) throw new Error('the server did not start');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    const signIn = async (email: string, password: string, expected: number): Promise<number> => {
      const started = performance.now();
      const response = await fetch(`${origin}/api/v1/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
      await response.arrayBuffer();
      const ms = performance.now() - started;
      if (response.status !== expected) throw new Error(`sign-in answered ${response.status}, expected ${expected}`);
      return ms;
    };

    const baselineHash = await hash(PASSWORD, ARGON2_OPTIONS);
    const samples = { baseline: [] as number[], right: [] as number[], wrong: [] as number[], unknown: [] as number[] };
    // Warm-up: JIT, the server's dummy hash, SQLite's cache.
    await signIn(EMAIL, PASSWORD, 201);
    await signIn('warm-up@example.test', PASSWORD, 401);
    for (let i = 0; i < options.rounds; i++) {
      const started = performance.now();
      await verify(baselineHash, PASSWORD);
      samples.baseline.push(performance.now() - started);
      samples.right.push(await signIn(EMAIL, PASSWORD, 201));
      samples.wrong.push(await signIn(EMAIL, 'not the password at all', 401));
      samples.unknown.push(await signIn(`nobody-${i}@example.test`, PASSWORD, 401));
    }

    const baseline = quantile(samples.baseline, 0.5);
    const classes = (['right', 'wrong', 'unknown'] as const).map((name) => ({
      class: { right: 'right password', wrong: 'wrong password, known address', unknown: 'unknown address' }[name],
      median_ms: round(quantile(samples[name], 0.5)),
      p90_ms: round(quantile(samples[name], 0.9)),
      ratio_to_one_argon2_verify: round(quantile(samples[name], 0.5) / baseline),
    }));
    const result = {
      rounds: options.rounds,
      load_average_1m_at_start: round(os.loadavg()[0]!),
      cpus: os.cpus().length,
      node: process.version,
      argon2: 'argon2id, 19 MiB, t=2, p=1',
      baseline_one_verify_median_ms: round(baseline),
      classes,
      unknown_to_wrong_median_ratio: round(quantile(samples.unknown, 0.5) / quantile(samples.wrong, 0.5)),
    };
    console.table(classes);
    console.log(JSON.stringify(result, null, 2));
    fs.writeFileSync(path.join(root, 'bench/results/sign-in.json'), `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    server?.kill();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
