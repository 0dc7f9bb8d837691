import { bigint, index, pgTable, text } from 'drizzle-orm/pg-core';
import { agents } from '../agents/agents.table.pg';
import type { ReportReason, ReportResolution, ReportStatus } from './reports.table';

/** PostgreSQL twin of reports.table.ts: same names, same values (see src-api/db/schema-pg.ts). */
export const reports = pgTable(
  'reports',
  {
    id: text('id').primaryKey(),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id),
    reason: text('reason').$type<ReportReason>().notNull(),
    details: text('details'),
    contactEmail: text('contact_email'),
    clientKey: text('client_key').notNull(),
    accountId: text('account_id'),
    status: text('status').$type<ReportStatus>().notNull().default('open'),
    resolution: text('resolution').$type<ReportResolution>(),
    resolutionReason: text('resolution_reason'),
    decidedBy: text('decided_by'),
    decidedAt: text('decided_at'),
    version: bigint('version', { mode: 'number' }).notNull().default(1),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (table) => [
    index('reports_status_created_idx').on(table.status, table.createdAt),
    index('reports_agent_status_idx').on(table.agentId, table.status),
    index('reports_agent_client_idx').on(table.agentId, table.clientKey, table.status),
  ],
);
