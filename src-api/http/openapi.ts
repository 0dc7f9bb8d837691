import http from 'node:http';
import type { RouteOptions } from 'fastify';

/**
 * The OpenAPI conventions of contract section 2, applied in one place to the generated document so
 * every route (those added later too) gets them: an operationId and a declared tag per operation,
 * problem+json error responses with real descriptions, the limit and paging headers, optional
 * security (anonymous or a key), and no `$id` (2020-12 forbids fragments in it; the components carry names).
 */

/** What the document cannot know from schemas alone: which routes spend a rate-limit budget. Fed by onRoute. */
export function createOpenApiRouteInfo() {
  const limited = new Set<string>();
  return {
    add(route: RouteOptions): void {
      if (!(route.config as { rateLimit?: string } | undefined)?.rateLimit) return;
      for (const method of [route.method].flat()) limited.add(`${method.toLowerCase()} ${toOpenApiPath(route.url)}`);
    },
    isLimited(method: string, path: string): boolean {
      return limited.has(`${method} ${path}`) || limited.has(`${method} ${path.replace(/\/$/, '')}`);
    },
  };
}
export type OpenApiRouteInfo = ReturnType<typeof createOpenApiRouteInfo>;

export function toOpenApiPath(url: string): string {
  return url.replace(/:(\w+)/g, '{$1}');
}

const TAG_DESCRIPTIONS: Record<string, string> = {
  service: 'Health and directory statistics',
  agents: 'The directory: list, profiles, bulk reads, connections',
  search: 'Full-text search over listed agents',
  reviews: 'Ratings and comments on agents',
  submissions: 'Proposing new agents for moderation',
  claims: 'Claiming ownership of an agent',
  newsletter: 'Newsletter sign-up',
  marketing: 'Published marketing posts',
};

const PROBLEM_REF = { $ref: '#/components/schemas/Problem' };
const HEADER_REF = (name: string) => ({ $ref: `#/components/headers/${name}` });

const HEADERS = {
  RateLimit: {
    description: 'The budget left in this window (IETF draft): `"<policy>";r=<remaining>;t=<seconds to reset>`',
    schema: { type: 'string', examples: ['"reads";r=99;t=60'] },
  },
  'RateLimit-Policy': {
    description: 'The budget this request spends from: `"<policy>";q=<quota>;w=<window seconds>`',
    schema: { type: 'string', examples: ['"reads";q=100;w=60'] },
  },
  'Retry-After': { description: 'Seconds until the limit resets', schema: { type: 'integer', minimum: 1 } },
  Link: { description: 'RFC 8288 links to the `next` and `prev` pages', schema: { type: 'string' } },
};

const ERROR_DESCRIPTIONS: Record<string, string> = {
  '400': 'Bad request: invalid parameters or body (`validation_failed`, `malformed_json`, …)',
  '401': 'The API key is unknown or revoked (`invalid_api_key`)',
  '404': 'Not found (`not_found`)',
  '409': 'Conflict with the current state (`conflict`, …)',
  '413': 'The body is larger than 1 MiB (`payload_too_large`)',
  '415': 'The body is not JSON (`unsupported_media_type`)',
  '422': 'The check did not pass (`verification_failed`)',
  '429': 'Over a rate limit (`rate_limited`); see Retry-After',
};

type Json = Record<string, unknown>;
const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'];

/** Rewrites the generated document in place to the conventions above. */
export function polishOpenApiDocument(document: Json, routes: OpenApiRouteInfo): Json {
  stripIds(document);
  const components = (document.components ??= {}) as Json;
  components.headers = { ...(components.headers as Json | undefined), ...HEADERS };
  const usedTags = new Set<string>();
  const usedIds = new Set<string>();

  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation) continue;
      operation.operationId ??= uniqueId(operationIdFor(method, path), usedIds);
      usedIds.add(operation.operationId as string);
      if (!Array.isArray(operation.tags) || operation.tags.length === 0) operation.tags = ['service'];
      for (const tag of operation.tags as string[]) usedTags.add(tag);
      operation.security ??= [{}, { bearerKey: [] }, { headerKey: [] }];

      const responses = (operation.responses ??= {}) as Record<string, Json>;
      const limited = routes.isLimited(method, path);
      // A bad key is a 401 on every route; limited routes can answer 429.
      responses['401'] ??= {};
      if (limited) responses['429'] ??= {};
      const paged = ((operation.parameters ?? []) as Json[]).some((parameter) => parameter.in === 'query' && parameter.name === 'page');

      for (const [status, response] of Object.entries(responses)) {
        const code = Number(status);
        const isError = status === 'default' || code >= 400;
        if (!response.description || response.description === 'Default Response') {
          response.description = isError
            ? (ERROR_DESCRIPTIONS[status] ?? http.STATUS_CODES[code] ?? 'Error')
            : (http.STATUS_CODES[code] ?? 'Success');
        }
        if (isError) response.content = { 'application/problem+json': { schema: PROBLEM_REF } };
        const headers: Json = { ...(response.headers as Json | undefined) };
        if (limited && (isError ? code === 429 : code < 300)) {
          headers.RateLimit = HEADER_REF('RateLimit');
          headers['RateLimit-Policy'] = HEADER_REF('RateLimit-Policy');
        }
        if (code === 429) headers['Retry-After'] = HEADER_REF('Retry-After');
        if (paged && code >= 200 && code < 300) headers.Link = HEADER_REF('Link');
        if (Object.keys(headers).length > 0) response.headers = headers;
      }
    }
  }

  const declared = new Map(((document.tags ?? []) as Array<{ name: string }>).map((tag) => [tag.name, tag]));
  for (const name of [...usedTags].sort()) {
    if (!declared.has(name)) declared.set(name, { name, ...(TAG_DESCRIPTIONS[name] ? { description: TAG_DESCRIPTIONS[name] } : {}) });
  }
  document.tags = [...declared.values()];
  return document;
}

/** `get /api/v1/agents/{id}/reviews` → `getAgentsByIdReviews`. */
function operationIdFor(method: string, path: string): string {
  const words = path
    .replace(/^\/api\/v\d+/, '')
    .split('/')
    .filter(Boolean)
    .map((segment) => {
      const param = /^\{(\w+)\}$/.exec(segment);
      const word = param ? `by-${param[1]}` : segment;
      return word
        .split(/[^A-Za-z0-9]+/)
        .filter(Boolean)
        .map((part) => part[0]!.toUpperCase() + part.slice(1))
        .join('');
    });
  return `${method}${words.join('') || 'Root'}`;
}

function uniqueId(id: string, used: Set<string>): string {
  let candidate = id;
  for (let i = 2; used.has(candidate); i++) candidate = `${id}${i}`;
  return candidate;
}

/** Removes every `$id` (zod's meta ids become component names already; some carry fragments). */
function stripIds(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) stripIds(item);
    return;
  }
  if (node && typeof node === 'object') {
    const record = node as Json;
    if (typeof record.$id === 'string') delete record.$id;
    for (const value of Object.values(record)) stripIds(value);
  }
}
