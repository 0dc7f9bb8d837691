import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT, count, makeTempDir, runCli, select, SUMMARY, writeFile } from './cli-helpers';

/** `cli import --format mcp-registry` (contract §9): MCP Registry server.json entries become profiles. */

const weather = {
  $schema: 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json',
  name: 'io.github.acme/weather',
  title: 'Acme Weather',
  description: 'Forecasts and alerts for any city, as MCP tools',
  version: '1.2.0',
  repository: { url: 'https://github.com/acme/weather-mcp', source: 'github' },
  packages: [
    { registryType: 'npm', identifier: '@acme/weather-mcp', version: '1.2.0', transport: { type: 'stdio' } },
    { registryType: 'pypi', identifier: 'acme-weather-mcp', version: '1.2.0', transport: { type: 'stdio' } },
  ],
  remotes: [{ type: 'streamable-http', url: 'https://weather.acme.example/mcp' }],
};

// An entry of the older registry schema (snake_case package fields), with only a website.
const legacy = {
  name: 'com.example/files',
  description: 'Reads and writes files in a sandbox',
  version_detail: { version: '0.3.0' },
  website_url: 'https://files.example.com',
  packages: [{ registry_name: 'oci', name: 'example/files-mcp', version: '0.3.0' }],
};

describe('cli import --format mcp-registry', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('imports one server.json, then an array; the same server again updates its agent', async () => {
    const dir = makeTempDir('agentdir-cli-mcp-');
    const dataDir = path.join(dir, 'data');
    const one = writeFile(dir, 'server.json', JSON.stringify(weather, null, 2));
    const first = await runCli(['import', '--format', 'mcp-registry', one, '--data-dir', dataDir]);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(SUMMARY);
    expect(first.stdout).toContain('1 created');

    const [row] = await select(dataDir, ({ db, t }) => db.select().from(t.agents));
    expect(row).toMatchObject({
      id: 'mcp-io-github-acme-weather',
      name: 'Acme Weather',
      tagline: 'Forecasts and alerts for any city, as MCP tools',
      author: 'acme',
      sourceUrl: 'https://github.com/acme/weather-mcp',
    });
    expect(row!.capabilities).toEqual(['mcp', 'npm', 'pypi', 'streamable-http']);
    expect(row!.categories).toEqual(['mcp-server']);
    expect(row!.description).toContain('npm @acme/weather-mcp@1.2.0');

    const updated = { ...weather, description: 'Forecasts, alerts and radar for any city' };
    const both = writeFile(dir, 'servers.json', JSON.stringify([updated, legacy]));
    const second = await runCli(['import', '--format', 'mcp-registry', both, '--data-dir', dataDir]);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('1 created, 1 updated');
    const rows = await select(dataDir, ({ db, t }) => db.select().from(t.agents).orderBy(t.agents.id));
    expect(rows.map((each) => [each.id, each.name, each.author, each.sourceUrl])).toEqual([
      ['mcp-com-example-files', 'files', 'example.com', 'https://files.example.com'],
      ['mcp-io-github-acme-weather', 'Acme Weather', 'acme', 'https://github.com/acme/weather-mcp'],
    ]);
    expect(rows[0]!.capabilities).toEqual(['mcp', 'oci']);
    expect(rows[1]!.tagline).toBe('Forecasts, alerts and radar for any city');
    expect(rows[1]!.version).toBe(2);
  });

  it('reads the registry list answer ({"servers":[{"server":…}]})', async () => {
    const dir = makeTempDir('agentdir-cli-mcp-');
    const dataDir = path.join(dir, 'data');
    const file = writeFile(
      dir,
      'list.json',
      JSON.stringify({ servers: [{ server: weather, _meta: {} }, { server: legacy }], metadata: { count: 2 } }),
    );
    const result = await runCli(['import', '--format', 'mcp-registry', file, '--data-dir', dataDir]);
    expect(result.code).toBe(0);
    expect(await count(dataDir, 'agents')).toBe(2);
  });

  it('reports every bad entry with where it is and writes nothing', async () => {
    const dir = makeTempDir('agentdir-cli-mcp-');
    const dataDir = path.join(dir, 'data');
    const bad = [weather, { name: 'no-slash', description: '' }, { name: 'io.github.x/y', description: 'no source at all' }];
    const file = writeFile(dir, 'bad.json', JSON.stringify(bad));
    const result = await runCli(['import', '--format', 'mcp-registry', file, '--data-dir', dataDir]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('/1/name');
    expect(result.stderr).toContain('/1/description');
    expect(result.stderr).toContain('/2/repository/url');
    expect(result.stderr).toContain('nothing was imported');
    // Rejected before the data dir is even opened.
    expect(fs.existsSync(dataDir)).toBe(false);

    const notJson = writeFile(dir, 'broken.json', '{"name":');
    const broken = await runCli(['import', '--format', 'mcp-registry', notJson, '--data-dir', dataDir]);
    expect(broken.code).not.toBe(0);
    expect(broken.stderr).toContain('not valid JSON');

    const unknown = await runCli(['import', '--format', 'yaml', file, '--data-dir', dataDir]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/format/);
  });
});
