import { z } from 'zod';
import type { ApiRoutes } from '../../http/routes';
import { idParamSchema, problemSchema } from '../../lib/schemas';
import { createReportBodySchema, reportReceiptSchema } from './reports.schemas';

export const reportsRoutes: ApiRoutes = async (api, { services }) => {
  api.post(
    '/agents/:id/reports',
    {
      config: { rateLimit: 'writes' },
      schema: {
        tags: ['agents'],
        operationId: 'reportAgent',
        summary: 'Report an agent',
        description:
          'Reports a listed agent to the moderators (spam, malware, impersonation, broken, other). 202: the report waits in ' +
          'the console’s Reports queue. One open report per agent per client: another is 409 `duplicate_report`. ' +
          'Unknown or unlisted agent: 404.',
        params: z.object({ id: idParamSchema }),
        body: createReportBodySchema,
        response: { 202: reportReceiptSchema, 400: problemSchema, 404: problemSchema, 409: problemSchema, 429: problemSchema },
      },
    },
    async (request, reply) =>
      reply.status(202).send(await services.reports.create(request.params.id, request.body, { clientKey: request.ip })),
  );
};
