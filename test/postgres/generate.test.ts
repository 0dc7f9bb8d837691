import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers/temp-dir';

/**
 * `npm run db:generate` makes the migrations of both stores (contract section
 * 8). Run on the schemas as they are, it finds nothing to do for either: the
 * committed migrations of SQLite and of PostgreSQL match the schemas. Run on
 * copies of the migration folders, so a pending change never writes into the
 * repository from a test.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

const DIALECTS = [
  { dialect: 'sqlite', schema: 'src-api/db/schema.ts', migrations: 'resources/migrations', config: 'drizzle.config.ts' },
  { dialect: 'postgresql', schema: 'src-api/db/schema-pg.ts', migrations: 'resources/migrations-pg', config: 'drizzle.config.pg.ts' },
] as const;

function listing(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    files[path.relative(dir, file)] = fs.readFileSync(file, 'utf8');
  }
  return files;
}

describe('npm run db:generate', () => {
  it('generates for both dialects, from drizzle.config.ts and drizzle.config.pg.ts', () => {
    const scripts = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['db:generate']).toBe('drizzle-kit generate && drizzle-kit generate --config drizzle.config.pg.ts');
    for (const { dialect, schema, migrations, config } of DIALECTS) {
      const text = fs.readFileSync(path.join(ROOT, config), 'utf8');
      expect(text).toContain(`dialect: '${dialect}'`);
      expect(text).toContain(`schema: './${schema}'`);
      expect(text).toContain(`out: './${migrations}'`);
    }
  });

  for (const { dialect, schema, migrations } of DIALECTS) {
    it(`${dialect}: no pending schema change, nothing written`, async () => {
      const dir = makeTempDir(`agentdir-generate-${dialect}-`);
      try {
        const out = path.join(dir, 'migrations');
        fs.cpSync(path.join(ROOT, migrations), out, { recursive: true });
        const before = listing(out);
        // drizzle-kit reads `out` relative to the working directory (it prefixes "./"), and exits 0 even when it fails.
        const args = ['generate', '--dialect', dialect, '--schema', `./${schema}`, '--out', path.relative(ROOT, out)];
        const drizzleKit = path.join(ROOT, 'node_modules', '.bin', 'drizzle-kit');
        const { stdout } = await run(drizzleKit, args, { cwd: ROOT, timeout: 90_000 });
        expect(stdout).toContain('No schema changes, nothing to migrate');
        expect(listing(out)).toEqual(before);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }, 120_000);
  }
});
