/** Every table, for drizzle-kit and for typed queries. Tables live beside their domain. */
export * from '../modules/agents/agents.table';
export * from '../modules/reviews/reviews.table';
export * from '../modules/submissions/submissions.table';
export * from '../modules/claims/claims.table';
export * from '../modules/newsletter/newsletter.table';
export * from '../modules/marketing/marketing.table';
export * from '../modules/keys/keys.table';
export * from '../modules/events/events.table';
export * from '../modules/webhooks/webhooks.table';
export * from '../modules/audit/audit.table';
export * from '../modules/mail/mail.table';
export * from '../modules/accounts/accounts.table';
export * from '../modules/reports/reports.table';
export * from '../modules/owners/owners.table';
