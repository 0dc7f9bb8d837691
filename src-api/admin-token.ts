import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config';
import { ensurePrivateDir, fixMode, PRIVATE_FILE_MODE } from './lib/private-files';

/**
 * The console's bearer token: AGENTDIR_ADMIN_TOKEN when given, else the one
 * in <dataDir>/admin-token, created (mode 0600) on first start.
 */
export function resolveAdminToken(config: Pick<Config, 'adminToken' | 'dataDir'>): string {
  if (config.adminToken) return config.adminToken;
  const file = path.join(config.dataDir, 'admin-token');
  ensurePrivateDir(config.dataDir);
  let shortFileExists = false;
  try {
    const existing = fs.readFileSync(file, 'utf8').trim();
    // An old file may have been written with another mode (or copied in): it is checked and fixed each start.
    fixMode(file, PRIVATE_FILE_MODE);
    if (existing.length >= 16) return existing;
    shortFileExists = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const token = randomBytes(32).toString('base64url');
  // Written whole under a private name, then put in place in one step: a process
  // starting at the same moment never reads a half-written token, and only one
  // token wins (link fails when the other process's file is already there).
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, `${token}\n`, { mode: PRIVATE_FILE_MODE });
  fixMode(temp, PRIVATE_FILE_MODE);
  try {
    if (shortFileExists) {
      fs.renameSync(temp, file);
      return token;
    }
    fs.linkSync(temp, file);
    return token;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return fs.readFileSync(file, 'utf8').trim();
  } finally {
    fs.rmSync(temp, { force: true });
  }
}
