/** Every table of the PostgreSQL store (the twin of schema.ts, same names and values), for drizzle-kit and for typed queries. Tables live beside their domain. */
export * from '../modules/agents/agents.table.pg';
export * from '../modules/reviews/reviews.table.pg';
export * from '../modules/submissions/submissions.table.pg';
export * from '../modules/claims/claims.table.pg';
export * from '../modules/newsletter/newsletter.table.pg';
export * from '../modules/marketing/marketing.table.pg';
export * from '../modules/keys/keys.table.pg';
export * from '../modules/events/events.table.pg';
export * from '../modules/webhooks/webhooks.table.pg';
export * from '../modules/audit/audit.table.pg';
export * from '../modules/mail/mail.table.pg';
export * from '../modules/accounts/accounts.table.pg';
export * from '../modules/reports/reports.table.pg';
export * from '../modules/owners/owners.table.pg';
