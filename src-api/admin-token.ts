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
  try {
    const existing = fs.readFileSync(file, 'utf8').trim();
    // An old file may have been written with another mode (or copied in): it is checked and fixed each start.
    fixMode(file, PRIVATE_FILE_MODE);
    if (existing.length >= 16) return existing;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const token = randomBytes(32).toString('base64url');
  // writeFileSync's mode only applies when it creates the file; a short, replaced file keeps its mode otherwise.
  fs.writeFileSync(file, `${token}\n`, { mode: PRIVATE_FILE_MODE });
  fixMode(file, PRIVATE_FILE_MODE);
  return token;
}
