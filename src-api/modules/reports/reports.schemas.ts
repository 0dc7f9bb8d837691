import { z } from 'zod';
import { emailSchema, idParamSchema, isoDateTimeSchema, pageQuerySchema } from '../../lib/schemas';

export const REPORT_REASONS = ['spam', 'malware', 'impersonation', 'broken', 'other'] as const;
export const REPORT_STATUSES = ['open', 'dismissed', 'resolved'] as const;
export const REPORT_RESOLUTIONS = ['dismiss', 'unlist', 'edit'] as const;

export const createReportBodySchema = z.strictObject({
  reason: z.enum(REPORT_REASONS).describe('What is wrong with the agent'),
  details: z.string().trim().max(2000).optional().describe('What you saw, for the moderators'),
  contact_email: emailSchema.optional().describe('Where moderators may ask you more; never shown publicly'),
});
export type CreateReportInput = z.infer<typeof createReportBodySchema>;

export const reportReceiptSchema = z
  .object({
    id: z.string(),
    agent_id: z.string(),
    reason: z.enum(REPORT_REASONS),
    status: z.literal('open'),
    created_at: isoDateTimeSchema,
  })
  .meta({ id: 'ReportReceipt', description: 'An abuse report received; moderators review it in the console.' });

export const listReportsQuerySchema = pageQuerySchema.extend({
  status: z.enum(REPORT_STATUSES).optional(),
  agent_id: idParamSchema.optional(),
});
export type ListReportsQuery = z.infer<typeof listReportsQuerySchema>;

/** The console's view of a report. */
export interface AdminReport {
  id: string;
  agent_id: string;
  agent_name: string | null;
  agent_listed: boolean | null;
  reason: (typeof REPORT_REASONS)[number];
  details: string | null;
  contact_email: string | null;
  status: (typeof REPORT_STATUSES)[number];
  resolution: (typeof REPORT_RESOLUTIONS)[number] | null;
  resolution_reason: string | null;
  decided_by: string | null;
  decided_at: string | null;
  created_at: string;
  version: number;
}
