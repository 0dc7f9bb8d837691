import { z } from 'zod';
import type { ImportIssue, ImportRecord } from './import-records';

/**
 * MCP Registry `server.json` entries as agent records for `cli import --format mcp-registry`
 * (contract §9). A file holds one entry, an array of them, or a registry list answer
 * (`{"servers":[{"server":{…},"_meta":{…}}]}`). Each entry becomes a profile:
 * - id `mcp-<name as a slug>`: importing the same server again updates its agent;
 * - name: `title`, else the part of `name` after the slash; tagline and description from `description`;
 * - author: the namespace (`io.github.acme/x` → `acme`, `com.example/x` → `example.com`);
 * - capabilities: `mcp`, each package's registry (`npm`, `pypi`, `oci`, `nuget`, `mcpb`) and each
 *   remote's transport (`streamable-http`, `sse`); category `mcp-server`;
 * - source_url: the repository, else the website, else the first remote.
 * Fields of older registry schemas (`registry_name`, `registry_type`, `package_name`) are read too.
 */

const MAX_TAG = 60;

const packageSchema = z.looseObject({
  registryType: z.string().optional(),
  registry_type: z.string().optional(),
  registry_name: z.string().optional(),
  identifier: z.string().optional(),
  name: z.string().optional(),
  version: z.string().optional(),
});

const serverSchema = z.looseObject({
  name: z
    .string()
    .min(3)
    .max(200)
    .regex(/^[A-Za-z0-9.-]+\/[A-Za-z0-9._-]+$/, 'must be a reverse-DNS name with one slash, e.g. io.github.acme/weather'),
  title: z.string().trim().min(1).max(120).optional(),
  description: z.string().trim().min(1, 'is required').max(10_000),
  version: z.string().max(100).optional(),
  repository: z.looseObject({ url: z.string().optional() }).optional(),
  websiteUrl: z.string().optional(),
  website_url: z.string().optional(),
  packages: z.array(packageSchema).max(50).optional(),
  remotes: z
    .array(z.looseObject({ type: z.string().optional(), transport_type: z.string().optional(), url: z.string().optional() }))
    .max(50)
    .optional(),
});
type ServerEntry = z.infer<typeof serverSchema>;

export interface McpRegistryRead {
  records: ImportRecord[];
  issues: ImportIssue[];
}

const slug = (value: string): string =>
  value
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');

const isHttpUrl = (value: string | undefined): value is string => {
  if (!value) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
};

function authorOf(name: string): string {
  const namespace = name.split('/')[0]!;
  const parts = namespace.split('.');
  // io.github.<user> and com.github.<user>: the account; otherwise the domain, written forwards.
  if (parts.length >= 3 && parts[1] === 'github') return parts.slice(2).join('.');
  return [...parts].reverse().join('.');
}

function firstLine(text: string, max: number): string {
  const line = text.split('\n')[0]!.trim();
  return line.length <= max ? line : `${line.slice(0, max - 1).trimEnd()}…`;
}

/** One validated entry as an import record. */
function toRecord(server: ServerEntry): Record<string, unknown> {
  const shortName = server.name.split('/')[1]!;
  const tags = new Set<string>(['mcp']);
  const installs: string[] = [];
  for (const pkg of server.packages ?? []) {
    const registry = (pkg.registryType ?? pkg.registry_type ?? pkg.registry_name)?.trim().toLowerCase();
    if (registry) tags.add(registry.slice(0, MAX_TAG));
    const identifier = pkg.identifier ?? pkg.name;
    if (registry && identifier) installs.push(`${registry} ${identifier}${pkg.version ? `@${pkg.version}` : ''}`);
  }
  for (const remote of server.remotes ?? []) {
    const transport = (remote.type ?? remote.transport_type)?.trim().toLowerCase();
    if (transport) tags.add(transport.slice(0, MAX_TAG));
    if (transport && remote.url) installs.push(`${transport} ${remote.url}`);
  }
  const website = server.websiteUrl ?? server.website_url;
  const source = [server.repository?.url, website, ...(server.remotes ?? []).map((remote) => remote.url)].find(isHttpUrl);
  const details = [`MCP server ${server.name}${server.version ? ` ${server.version}` : ''}.`];
  if (installs.length > 0) details.push(`Install or connect: ${installs.join('; ')}.`);
  return {
    id: `mcp-${slug(server.name)}`.slice(0, 100),
    name: (server.title ?? shortName).slice(0, 120),
    tagline: firstLine(server.description, 200),
    description: `${server.description}\n\n${details.join(' ')}`.slice(0, 10_000),
    author: authorOf(server.name).slice(0, 120),
    capabilities: [...tags],
    categories: ['mcp-server'],
    type: 'other',
    ...(source !== undefined && { source_url: source }),
  };
}

/** The entries of a file's text, each mapped to an agent record, or what is wrong with each. */
export function readMcpRegistry(text: string): McpRegistryRead {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { records: [], issues: [{ line: 1, pointer: '', detail: `not valid JSON: ${(error as Error).message}` }] };
  }
  // One entry, an array of entries, or the registry API's list answer.
  const listed = (parsed as { servers?: unknown } | null)?.servers;
  const entries = Array.isArray(parsed) ? parsed : Array.isArray(listed) ? listed : [parsed];
  const prefix = Array.isArray(parsed) ? '' : Array.isArray(listed) ? '/servers' : '';
  const records: ImportRecord[] = [];
  const issues: ImportIssue[] = [];
  entries.forEach((entry, index) => {
    const wrapped = (entry as { server?: unknown } | null)?.server;
    const server = typeof wrapped === 'object' && wrapped !== null ? wrapped : entry;
    const where = { line: 1, index, base: `${prefix}${entries.length > 1 || prefix ? `/${index}` : ''}${wrapped ? '/server' : ''}` };
    const result = serverSchema.safeParse(server);
    if (!result.success) {
      for (const issue of result.error.issues) {
        issues.push({
          line: where.line,
          index,
          pointer: `${where.base}/${issue.path.join('/')}`.replace(/\/$/, ''),
          detail: issue.message,
        });
      }
      return;
    }
    const record = toRecord(result.data);
    if (record.source_url === undefined) {
      issues.push({
        line: where.line,
        index,
        pointer: `${where.base}/repository/url`,
        detail: 'needs an http(s) repository.url, websiteUrl or remote url',
      });
      return;
    }
    records.push({ value: record, line: where.line, index });
  });
  if (entries.length === 0) issues.push({ line: 1, pointer: '', detail: 'no server entries' });
  return { records, issues };
}
