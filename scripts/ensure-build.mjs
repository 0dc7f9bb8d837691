// Builds a target when its build is missing or older than its sources, and
// does nothing (quickly) otherwise. `npm run serve` and `npm run cli` run it
// first (preserve, precli), `npm start`, the benchmarks and the Electron shell test use it too.
//   node scripts/ensure-build.mjs web        → out/web (the console and the developer dashboard for the browser)
//   node scripts/ensure-build.mjs api        → out/api (serve.js and cli.js, the headless server and the CLI)
//   node scripts/ensure-build.mjs electron   → out/main, out/preload, out/renderer
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

const vite = () => path.join(path.dirname(require.resolve('vite/package.json')), 'bin', 'vite.js');

const TARGETS = {
  web: {
    description: 'web build of the console and the developer dashboard (out/web)',
    // The last page of the build: an older build without the dashboard counts as missing.
    output: 'out/web/dashboard/index.html',
    inputs: ['src-renderer', 'vite.web.config.ts', 'package-lock.json'],
    command: () => [vite(), 'build', '--config', 'vite.web.config.ts', '--logLevel', 'warn'],
  },
  api: {
    description: 'headless server and CLI (out/api)',
    output: 'out/api/serve.js',
    // Migrations are read from resources/migrations at run time, not bundled: no input here.
    inputs: ['src-api', 'vite.api.config.ts', 'package.json', 'package-lock.json'],
    command: () => [vite(), 'build', '--config', 'vite.api.config.ts', '--logLevel', 'warn'],
  },
  electron: {
    description: 'desktop app (out/main, out/preload, out/renderer)',
    output: 'out/main/index.js',
    inputs: ['src-main', 'src-api', 'src-renderer', 'electron.vite.config.ts', 'package.json', 'package-lock.json'],
    command: () => [
      path.join(path.dirname(require.resolve('electron-vite/package.json')), 'bin', 'electron-vite.js'),
      'build',
      '--logLevel',
      'warn',
    ],
  },
};

const SKIPPED_DIRS = new Set(['node_modules', '.git', 'out']);

/** The newest modification time under `paths` (files and folders, recursively), in ms. */
function newestMtime(paths) {
  let newest = 0;
  const visit = (file) => {
    let stat;
    try {
      stat = fs.statSync(file);
    } catch {
      return;
    }
    if (stat.isDirectory()) {
      newest = Math.max(newest, stat.mtimeMs);
      for (const entry of fs.readdirSync(file)) if (!SKIPPED_DIRS.has(entry)) visit(path.join(file, entry));
    } else {
      newest = Math.max(newest, stat.mtimeMs);
    }
  };
  for (const p of paths) visit(path.join(root, p));
  return newest;
}

function isFresh(target) {
  try {
    return fs.statSync(path.join(root, target.output)).mtimeMs >= newestMtime(target.inputs);
  } catch {
    return false;
  }
}

/** One build at a time per target, across processes (tests start servers in parallel). */
function withLock(name, work) {
  const lock = path.join(root, 'out', `.${name}-build.lock`);
  const owner = path.join(lock, 'pid');
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  const deadline = Date.now() + 5 * 60_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(owner, String(process.pid));
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      // A build interrupted (Ctrl-C) leaves its lock behind: take it over once its owner is gone.
      const pid = readPid(owner);
      const abandoned = pid === undefined ? lockAgeMs(lock) > 10_000 : !isRunning(pid);
      if (abandoned || Date.now() > deadline) fs.rmSync(lock, { recursive: true, force: true });
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
  try {
    return work();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

function readPid(file) {
  try {
    return Number(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined; // just created, the owner has not written it yet
  }
}

function lockAgeMs(lock) {
  const stat = fs.statSync(lock, { throwIfNoEntry: false });
  return stat ? Date.now() - stat.mtimeMs : Infinity;
}

function isRunning(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Builds `name` unless it is up to date; returns true when it built. Throws when the build fails. */
export function ensureBuild(name) {
  const target = TARGETS[name];
  if (!target) throw new Error(`unknown build target "${name}" (${Object.keys(TARGETS).join(', ')})`);
  if (isFresh(target)) return false;
  return withLock(name, () => {
    if (isFresh(target)) return false; // another process built it while we waited
    process.stderr.write(`Building the ${target.description}…\n`);
    // Vite's report goes to stderr: stdout belongs to the command that asked (serve prints its URLs there).
    const result = spawnSync(process.execPath, target.command(), { cwd: root, stdio: ['ignore', 2, 2] });
    if (result.status !== 0) throw new Error(`the ${name} build failed (exit ${result.status ?? result.signal})`);
    return true;
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    for (const name of process.argv.slice(2).length ? process.argv.slice(2) : ['web']) ensureBuild(name);
  } catch (error) {
    console.error(`ensure-build: ${error.message}`);
    process.exit(1);
  }
}
