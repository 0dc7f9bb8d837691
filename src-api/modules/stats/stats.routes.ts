import type { ApiRoutes } from '../../http/routes';
import { problemSchema } from '../../lib/schemas';
import { directoryStatsSchema } from './stats.schemas';

export const statsRoutes: ApiRoutes = async (api, { services }) => {
  api.get(
    '/stats',
    {
      config: { rateLimit: 'reads' },
      schema: {
        tags: ['service'],
        summary: 'Directory statistics',
        description:
          'Counts of listed agents (all, verified, per type and per category) and of visible reviews with their mean rating. ' +
          '`types` lists every agent type the directory accepts; `by_type` has a key for each, zeros included.',
        response: { 200: directoryStatsSchema, 429: problemSchema },
      },
    },
    async () => services.stats.directory(),
  );
};
