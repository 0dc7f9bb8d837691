import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/**
 * The project's folder (the nearest one above this module with a package.json).
 * Found by walking up rather than by a fixed `../..`, because this module runs
 * from different depths: src-api/lib/ under tsx, out/api/chunks/ in the build
 * that `npm run serve` and `npm run cli` run, out/main/ in Electron.
 */
export function projectRoot(): string {
  if (root !== undefined) return root;
  const start = path.dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return (root = dir);
    if (path.dirname(dir) === dir) throw new Error(`no package.json in ${start} or above it`);
  }
}

/** A path inside the project, e.g. projectPath('resources', 'migrations'). */
export function projectPath(...segments: string[]): string {
  return path.join(projectRoot(), ...segments);
}
