#!/usr/bin/env node
// Regenerates clients/typescript/src/schema.d.ts from the server's OpenAPI document.
//
//   node clients/typescript/generate.mjs              starts a throw-away server (tsx src-api/serve.ts,
//                                                     port 0, temp data dir, no demo data), reads
//                                                     /api/v1/openapi.json, writes the file, stops it
//   node clients/typescript/generate.mjs --url URL    reads URL/openapi.json from a running server instead
//                                                     (URL is the API base, e.g. http://127.0.0.1:8787/api/v1)
//   node clients/typescript/generate.mjs --check      writes nothing; exits 1 if the committed file is stale
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateSchemaSource, SCHEMA_FILE } from './schema-source.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const check = args.includes('--check');
const urlIndex = args.indexOf('--url');
const givenUrl = urlIndex >= 0 ? args[urlIndex + 1] : undefined;

async function withServer(use) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-openapi-'));
  const tsx = path.join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'tsx.cmd' : 'tsx');
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('AGENTDIR_')));
  const child = spawn(tsx, ['src-api/serve.ts', '--port', '0', '--data-dir', dataDir, '--no-demo-data', '--rate-limit', 'off'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  try {
    const apiBase = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the server did not start within 120 s:\n${output}`)), 120_000);
      const onData = (chunk) => {
        output += chunk.toString();
        const match = /Agent Directory API: (\S+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', (chunk) => (output += chunk.toString()));
      child.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the server exited with ${code}:\n${output}`));
      });
    });
    return await use(apiBase);
  } finally {
    child.removeAllListeners('exit');
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function fetchDocument(apiBase) {
  const response = await fetch(`${apiBase.replace(/\/+$/, '')}/openapi.json`);
  if (!response.ok) throw new Error(`GET ${apiBase}/openapi.json: HTTP ${response.status}`);
  return response.json();
}

const document = givenUrl ? await fetchDocument(givenUrl) : await withServer(fetchDocument);
const source = await generateSchemaSource(document);
const relative = path.relative(root, SCHEMA_FILE);
if (check) {
  const current = fs.existsSync(SCHEMA_FILE) ? fs.readFileSync(SCHEMA_FILE, 'utf8') : '';
  if (current !== source) {
    console.error(`${relative} is out of date: run \`node clients/typescript/generate.mjs\``);
    process.exit(1);
  }
  console.log(`${relative} is up to date`);
} else {
  fs.writeFileSync(SCHEMA_FILE, source);
  console.log(`wrote ${relative} (${Object.keys(document.paths ?? {}).length} paths in the document)`);
}
