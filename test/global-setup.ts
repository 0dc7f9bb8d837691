import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * One temp folder per `vitest run`: makeTempDir (test/helpers/test-server.ts) makes each test's data
 * dir inside it, and the run removes it at the end. Without it a run left about 600 SQLite data dirs
 * in /tmp. Workers inherit the variable: they are started after this runs.
 */
export default function setup(): () => void {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-tests-'));
  // Traversable like /tmp itself, for servers that drop privileges (nginx workers); each data dir inside stays 0700.
  fs.chmodSync(root, 0o755);
  process.env.AGENTDIR_TEST_TMP = root;
  return () => fs.rmSync(root, { recursive: true, force: true });
}
