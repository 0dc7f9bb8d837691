import { z } from 'zod';
import type { ApiRoutes } from '../../http/routes';
import { API_VERSION } from '../../version';

export const healthResponseSchema = z.object({
  status: z.literal('ok'),
  agents_indexed: z
    .number()
    .int()
    .describe(
      'Listed agents searchable in the index now. Right after start-up the index is built in the background, so this grows to the total listed agents during the warm-up (searches meanwhile still see every agent).',
    ),
  version: z.string().describe('Service version, major.minor.patch'),
});

export const healthRoutes: ApiRoutes = async (api, { services }) => {
  api.get(
    '/health',
    { schema: { tags: ['service'], summary: 'Is the service up?', response: { 200: healthResponseSchema } } },
    async () => ({
      status: 'ok' as const,
      agents_indexed: await services.search.indexedCount(),
      version: API_VERSION,
    }),
  );
};
