import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, root } from './main-process-harness';
import { makeTempDir } from '../helpers/temp-dir';

function electronBinaryInstalled(): boolean {
  try {
    const binary: unknown = createRequire(import.meta.url)('electron');
    return typeof binary === 'string' && fs.existsSync(binary);
  } catch {
    return false;
  }
}

const dataDir = makeTempDir('agentdir-start-');
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

// On machines with the binary, `npm start` opens a window instead; nothing to check headless there.
describe.skipIf(electronBinaryInstalled())('npm start without the Electron binary', () => {
  it('says so in one line, serves headless with the same arguments, and stops cleanly on SIGINT', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ['scripts/start.mjs', '--port', String(port), '--data-dir', dataDir, '--no-demo-data'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

    const deadline = Date.now() + 60_000;
    while (!stdout.includes('Console: ') && Date.now() < deadline && child.exitCode === null) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toBe(
      `Electron binary not installed on this machine; serving headless instead: npm run serve -- --port ${port} --data-dir ${dataDir} --no-demo-data`,
    );
    expect(lines).toContain(`Agent Directory API: http://127.0.0.1:${port}/api/v1`);
    expect((await fetch(`http://127.0.0.1:${port}/api/v1/health`)).status).toBe(200);
    // The headless server is the full `serve`: console included.
    expect((await fetch(`http://127.0.0.1:${port}/trpc/system.whoami`)).status).toBe(401);
    expect(fs.existsSync(path.join(dataDir, 'agent-directory.sqlite'))).toBe(true);

    child.kill('SIGINT');
    expect(await exited).toBe(0);
    await expect(fetch(`http://127.0.0.1:${port}/api/v1/health`)).rejects.toThrow();
  }, 90_000);
});
