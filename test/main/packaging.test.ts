import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Ajv } from 'ajv';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PACKAGED_MIGRATIONS } from '../../src-main/app-location';
import { freePort, MainProcess, root } from './main-process-harness';
import { makeTempDir } from '../helpers/temp-dir';

/**
 * `npm run dist` needs Electron's binary, which cannot be downloaded here, so
 * the packaging is checked piece by piece: electron-builder.yml validates
 * against electron-builder's own JSON schema, every file it names exists after
 * the build, and the built main process, playing a packaged app (stand-in
 * `electron` with app.isPackaged true and process.resourcesPath set), finds
 * its migrations where extraResources puts them.
 */

interface CopySpec {
  from: string;
  to: string;
}
interface BuilderConfig {
  appId: string;
  files: string[];
  extraResources: CopySpec[];
  asarUnpack: string[];
  icon: string;
  directories: { buildResources: string };
  linux: { target: string[]; icon: string };
  mac: { target: string[]; icon: string };
  win: { target: string[]; icon: string };
}

const config = parse(fs.readFileSync(path.join(root, 'electron-builder.yml'), 'utf8')) as BuilderConfig;
const require = createRequire(import.meta.url);

beforeAll(() => {
  // out/main, out/preload, out/renderer (as `npm run build` makes them), unless newer than every source.
  execFileSync(process.execPath, ['scripts/ensure-build.mjs', 'electron'], { cwd: root, stdio: 'inherit' });
}, 180_000);

describe('electron-builder.yml', () => {
  const schema = JSON.parse(fs.readFileSync(require.resolve('app-builder-lib/scheme.json'), 'utf8')) as object;
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);

  it("validates against electron-builder's own schema (app-builder-lib/scheme.json)", () => {
    const valid = validate(config);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
    // The schema is strict enough to catch a typo.
    expect(validate({ ...config, asarUnpak: ['x'] })).toBe(false);
  });

  it('builds an AppImage and a deb, a dmg and an nsis installer, under a stable app id', () => {
    expect(config.appId).toBe('dev.agent-directory.console');
    expect(config.linux.target).toEqual(['AppImage', 'deb']);
    expect(config.mac.target).toEqual(['dmg']);
    expect(config.win.target).toEqual(['nsis']);
    expect(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.dist).toMatch(/electron-builder/);
  });

  it('names only files that exist after the build', () => {
    for (const pattern of config.files.filter((entry) => !entry.startsWith('!'))) {
      const base = pattern.replace(/\/\*\*$/, '');
      expect(fs.existsSync(path.join(root, base)), pattern).toBe(true);
    }
    for (const file of ['out/main/index.js', 'out/preload/index.cjs', 'out/renderer/index.html']) {
      expect(fs.existsSync(path.join(root, file)), file).toBe(true);
    }
    for (const { from } of config.extraResources) expect(fs.readdirSync(path.join(root, from)).length, from).toBeGreaterThan(0);
    expect(fs.existsSync(path.join(root, config.directories.buildResources))).toBe(true);
  });

  it('has a 512x512 PNG icon for every platform', () => {
    for (const icon of new Set([config.icon, config.linux.icon, config.mac.icon, config.win.icon])) {
      const png = PNG.sync.read(fs.readFileSync(path.join(root, icon)));
      expect([icon, png.width, png.height]).toEqual([icon, 512, 512]);
    }
  });

  it('unpacks better-sqlite3 (a native addon) from the asar and puts the migrations beside it', () => {
    expect(config.asarUnpack).toContain('node_modules/better-sqlite3/**');
    expect(config.extraResources).toContainEqual(expect.objectContaining({ from: 'resources/migrations', to: PACKAGED_MIGRATIONS }));
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(pkg.dependencies['better-sqlite3']).toBeDefined();
  });
});

describe('the main process of a packaged app', () => {
  const resourcesPath = makeTempDir('agentdir-resources-');
  let main: MainProcess | undefined;

  beforeAll(() => {
    // The resources folder as electron-builder lays it out: each extraResources `from` copied to `to`.
    for (const { from, to } of config.extraResources) fs.cpSync(path.join(root, from), path.join(resourcesPath, to), { recursive: true });
  });
  afterAll(() => {
    main?.kill();
    fs.rmSync(resourcesPath, { recursive: true, force: true });
  });

  it('migrates its database from process.resourcesPath when app.isPackaged', { timeout: 90_000 }, async () => {
    const port = await freePort();
    main = MainProcess.start({
      AGENTDIR_PORT: String(port),
      FAKE_ELECTRON_PACKAGED: '1',
      FAKE_ELECTRON_RESOURCES_PATH: resourcesPath,
      // Not the project: a packaged app has no resources/ folder of the sources to fall back on.
      FAKE_ELECTRON_APP_PATH: path.join(resourcesPath, 'app.asar'),
    });
    // A fresh database migrated from scratch, on a shared machine: give it time.
    const apiBaseUrl = await main.apiBaseUrl(60_000);
    const health = await fetch(`${apiBaseUrl}/health`);
    expect(health.status).toBe(200);
    const migrated = fs.readdirSync(path.join(resourcesPath, PACKAGED_MIGRATIONS)).filter((name) => name.endsWith('.sql'));
    expect(migrated.length).toBeGreaterThan(0);
  });

  it('fails to start, saying why, when the migrations are not where a packaged app looks', async () => {
    const empty = makeTempDir('agentdir-no-resources-');
    const broken = MainProcess.start({
      AGENTDIR_PORT: String(await freePort()),
      FAKE_ELECTRON_PACKAGED: '1',
      FAKE_ELECTRON_RESOURCES_PATH: empty,
    });
    try {
      await expect(broken.apiBaseUrl(20_000)).rejects.toThrow(/could not start[\s\S]*_journal\.json/);
    } finally {
      broken.kill();
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });
});
