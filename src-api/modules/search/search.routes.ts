import { z } from 'zod';
import type { ApiRoutes } from '../../http/routes';
import { idParamSchema, problemSchema } from '../../lib/schemas';
import { CONNECTION_WEIGHTS } from './search-index';
import { setPageLinks } from '../../http/pagination';
import { sendJson } from '../../http/send-json';
import {
  connectionsQuerySchema,
  connectionsResultSchema,
  searchBodySchema,
  searchQuerySchema,
  searchResultSchema,
  type ConnectionsResult,
  type SearchResult,
} from './search.schemas';

const SEARCH_DESCRIPTION = [
  'Full-text search over listed agents: name, tagline, description, capabilities and author (weighted in that spirit: ',
  'name highest, then capabilities, then tagline, then description, author lowest; BM25-style term weighting). ',
  'Words are matched case- and accent-insensitively, and in other forms of the word (Porter stems: "summarize" finds ',
  '"summarization", "deployment" finds "deploys"), the exact form ranking above other forms; words in hyphenated, ',
  'dotted, underscored or camel-cased names count as words ("CodeReviewer" is found by "reviewer"); ',
  'a word also matches words it starts (prefix: "auth" finds "authentication"), and, from 4 letters, ',
  'words one edit away (two from 8 letters; a swap of adjacent letters is one edit), at a lower score.',
  '\n\nWhen some agents match every word, only those are returned; otherwise agents matching any word, ',
  'those matching more words first. An agent whose name is exactly the query comes first. ',
  '`score` = number of query words matched + 1 for an exact-name match + relevance (0 to <1); higher is better. ',
  'Ties go to the higher trust score, then the smaller id.',
  '\n\nFilters apply exactly: `type` (exact), `min_trust` (trust_score ≥ min_trust), `capabilities` ',
  '(the agent must have every one; case-insensitive exact match of the whole capability). ',
  'With no query (or one without letters or digits), every agent passing the filters is returned by ',
  'trust score, highest first, with `score` 0. `total` counts all matches; `agents` holds page `page` (from 1) of ',
  '`limit` (1–100, default 20) hits, page × limit at most 10,000; an RFC 8288 `Link` header gives the `next` and `prev` pages. ',
  'The index follows every change to the directory, including imports by another process, on the next request.',
].join('');

const errors = { 400: problemSchema, 429: problemSchema };

export const searchRoutes: ApiRoutes = async (api, { services }) => {
  api.get(
    '/agents/search',
    {
      config: { rateLimit: 'reads', batchAnswers: true },
      schema: {
        tags: ['search'],
        summary: 'Search agents',
        description: `${SEARCH_DESCRIPTION}\n\nQuery string: \`q\`, \`page\`, \`limit\`, \`type\`, \`min_trust\`, \`capabilities\` (comma-separated, or repeated).`,
        querystring: searchQuerySchema,
        response: { 200: searchResultSchema, ...errors },
      },
    },
    async (request, reply) => {
      // The query as validated (its text as `q`, which searchJson takes as well): no copy of it per request.
      const found = await services.search.searchJson(request.query);
      setPageLinks(request, reply, found);
      return sendJson<SearchResult>(reply, found.json);
    },
  );

  api.post(
    '/agents/search',
    {
      config: { rateLimit: 'reads', batchAnswers: true },
      schema: {
        tags: ['search'],
        summary: 'Search agents (structured)',
        description:
          `${SEARCH_DESCRIPTION}\n\nThe same search as \`GET /agents/search\`, with a JSON body; every field is optional ` +
          '(`{}` lists all agents by trust score) and unknown fields are rejected; the text may be given as `query` or `q`. ' +
          'The `Link` header points at the neighbouring pages as GET URLs.',
        body: searchBodySchema,
        response: { 200: searchResultSchema, ...errors, 413: problemSchema, 415: problemSchema },
      },
    },
    async (request, reply) => {
      const found = await services.search.searchJson(request.body);
      // Links to the same search as a GET: a link cannot carry a body.
      const { query, q, capabilities, type, min_trust } = request.body;
      const get = new URLSearchParams();
      if ((query ?? q) !== undefined) get.set('q', (query ?? q)!);
      if (type !== undefined) get.set('type', type);
      if (min_trust !== undefined) get.set('min_trust', String(min_trust));
      if (capabilities?.length) get.set('capabilities', capabilities.join(','));
      setPageLinks(request, reply, found, get);
      return sendJson<SearchResult>(reply, found.json);
    },
  );

  api.get(
    '/agents/:id/connections',
    {
      config: { rateLimit: 'reads' },
      schema: {
        tags: ['search'],
        summary: 'Related agents',
        description:
          'Listed agents related to this one, best first, never the agent itself. ' +
          `\`score\` = ${CONNECTION_WEIGHTS.category} per shared category + ${CONNECTION_WEIGHTS.author} for the same ` +
          `(non-empty, case-insensitive) author + ${CONNECTION_WEIGHTS.capability} per shared capability; categories and ` +
          'capabilities compare case-insensitively. Ties go to the higher trust score, then the smaller id. Only agents ' +
          'sharing something are listed. For categories shared by a very large part of the directory, agents that share ' +
          'nothing rarer are sampled rather than all ranked. `limit`: 1–50, default 10.',
        params: z.object({ id: idParamSchema.describe('Agent id') }),
        querystring: connectionsQuerySchema,
        response: { 200: connectionsResultSchema, ...errors, 404: problemSchema },
      },
    },
    async (request, reply) =>
      sendJson<ConnectionsResult>(reply, await services.search.connectionsJson(request.params.id, request.query.limit)),
  );
};
