import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A fresh, empty folder: inside the run's temp folder (test/global-setup.ts, removed when the run ends), else the OS one. */
export function makeTempDir(prefix = 'agentdir-test-'): string {
  return fs.mkdtempSync(path.join(process.env.AGENTDIR_TEST_TMP ?? os.tmpdir(), prefix));
}
