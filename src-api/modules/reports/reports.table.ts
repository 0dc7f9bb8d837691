import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { agents } from '../agents/agents.table';

export type ReportReason = 'spam' | 'malware' | 'impersonation' | 'broken' | 'other';
export type ReportStatus = 'open' | 'dismissed' | 'resolved';
/** What a moderator did about a report. */
export type ReportResolution = 'dismiss' | 'unlist' | 'edit';

/** A public abuse report on a listed agent, waiting in the console's Reports queue. */
export const reports = sqliteTable(
  'reports',
  {
    id: text('id').primaryKey(),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id),
    reason: text('reason').$type<ReportReason>().notNull(),
    details: text('details'),
    contactEmail: text('contact_email'),
    /** Who reported: the client IP key (one open report per agent per client). */
    clientKey: text('client_key').notNull(),
    /** The reporter's account, when signed in. */
    accountId: text('account_id'),
    status: text('status').$type<ReportStatus>().notNull().default('open'),
    resolution: text('resolution').$type<ReportResolution>(),
    /** The moderator's reason for the resolution. */
    resolutionReason: text('resolution_reason'),
    decidedBy: text('decided_by'),
    decidedAt: text('decided_at'),
    version: integer('version').notNull().default(1),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (table) => [
    index('reports_status_created_idx').on(table.status, table.createdAt),
    index('reports_agent_status_idx').on(table.agentId, table.status),
    index('reports_agent_client_idx').on(table.agentId, table.clientKey, table.status),
  ],
);

export type ReportRow = typeof reports.$inferSelect;
