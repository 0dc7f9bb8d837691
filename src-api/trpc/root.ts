import { router } from './init';
import { agentsRouter } from '../modules/agents/agents.router';
import { reviewsRouter } from '../modules/reviews/reviews.router';
import { marketingRouter } from '../modules/marketing/marketing.router';
import { statsRouter } from '../modules/stats/stats.router';
import { auditRouter } from '../modules/audit/audit.router';
import { keysRouter } from '../modules/keys/keys.router';
import { newsletterRouter } from '../modules/newsletter/newsletter.router';
import { submissionsRouter } from '../modules/submissions/submissions.router';
import { claimsRouter } from '../modules/claims/claims.router';
import { editRequestsRouter } from '../modules/owners/edit-requests.router';
import { reportsRouter } from '../modules/reports/reports.router';
import { webhooksRouter } from '../modules/webhooks/webhooks.router';
import { systemRouter } from './routers/system.router';
import { backupRouter } from '../modules/backup/backup.router';
import { accountsRouter } from '../modules/accounts/accounts.router';
import { sessionRouter } from './routers/session.router';

/**
 * The console's API, one router per domain; both transports (HTTP /trpc in
 * serve mode, IPC in Electron) serve this same object. Add a domain with one line.
 */
export const appRouter = router({
  system: systemRouter,
  session: sessionRouter,
  accounts: accountsRouter,
  webhooks: webhooksRouter,
  submissions: submissionsRouter,
  claims: claimsRouter,
  editRequests: editRequestsRouter,
  reports: reportsRouter,
  agents: agentsRouter,
  reviews: reviewsRouter,
  marketing: marketingRouter,
  stats: statsRouter,
  audit: auditRouter,
  keys: keysRouter,
  newsletter: newsletterRouter,
  backup: backupRouter,
});

export type AppRouter = typeof appRouter;
