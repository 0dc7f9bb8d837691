import fs from 'node:fs';

/**
 * The data dir holds webhook secrets, API key hashes, e-mail addresses and the admin token: only its
 * owner may read it. These helpers create with the private mode and also fix an existing path whose
 * mode is wider (an old install, a copied file, a restrictive umask not in force).
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Creates `dir` (and parents) if missing; the dir itself ends up 0700. */
export function ensurePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  fixMode(dir, PRIVATE_DIR_MODE);
}

/**
 * Creates `dir` (and parents) 0700 if missing, and leaves an existing one as it is: for a folder the
 * user named that may be shared (`--database sqlite:/srv/shared/agents.sqlite`, or /tmp), whose mode
 * is not ours to change.
 */
export function createPrivateDirIfMissing(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** Creates `file` empty if missing; it ends up 0600 either way. */
export function ensurePrivateFile(file: string): void {
  fs.closeSync(fs.openSync(file, 'a', PRIVATE_FILE_MODE));
  fixMode(file, PRIVATE_FILE_MODE);
}

/** Sets `mode` on `target` when it exists with another one; a missing target is fine. */
export function fixMode(target: string, mode: number): void {
  try {
    if ((fs.statSync(target).mode & 0o777) !== mode) fs.chmodSync(target, mode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
