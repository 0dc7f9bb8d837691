// `npm start`: the desktop app when this machine has the Electron binary, else
// the headless server (as `npm run serve`, same arguments) after one line saying so.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuild } from './ensure-build.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const args = process.argv.slice(2);

/** The Electron executable, or null when the package is there without its binary (npm install could not download it). */
function electronBinary() {
  try {
    const binary = require('electron');
    return typeof binary === 'string' && fs.existsSync(binary) ? binary : null;
  } catch {
    return null;
  }
}

/**
 * Runs a child in its own process group and relays SIGINT/SIGTERM/SIGHUP to it,
 * each at most once: a terminal's Ctrl-C reaches npm and us both, and npm passes
 * it on again, but the child must hear it once to shut down gracefully.
 * Exits with the child's status.
 */
function run(command, commandArgs, options = {}) {
  const child = spawn(command, commandArgs, { cwd: root, stdio: 'inherit', detached: true, ...options });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    let relayed = false;
    process.on(signal, () => {
      if (relayed || child.exitCode !== null || child.signalCode !== null) return;
      relayed = true;
      child.kill(signal);
    });
  }
  // If we go first (an uncaught error), do not leave the child behind.
  process.on('exit', () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  });
  child.on('error', (error) => {
    console.error(`start: could not run ${command}: ${error.message}`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal === 'SIGINT' ? 130 : signal === 'SIGTERM' ? 143 : 1)));
}

try {
  const electron = electronBinary();
  if (electron === null) {
    console.log(
      `Electron binary not installed on this machine; serving headless instead: npm run serve${args.length ? ` -- ${args.join(' ')}` : ''}`,
    );
    // What `npm run serve` runs: the compiled server, not tsx.
    ensureBuild('web');
    ensureBuild('api');
    run(process.execPath, [path.join('out', 'api', 'serve.js'), ...args]);
  } else {
    ensureBuild('electron');
    run(electron, ['.', ...args]);
  }
} catch (error) {
  console.error(`start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
