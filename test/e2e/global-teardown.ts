import fs from 'node:fs';

/** The server is stopped by then; its data dir goes too. */
export default function globalTeardown(): void {
  const dataDir = process.env.AGENTDIR_E2E_DATA_DIR;
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
}
