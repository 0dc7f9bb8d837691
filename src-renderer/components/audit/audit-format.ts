import type { RouteLocationRaw } from 'vue-router';

/** Where an audited entity can be opened in the console; null for kinds without a screen. */
export function entityRoute(entityType: string, entityId: string): RouteLocationRaw | null {
  switch (entityType) {
    case 'agent':
      return { name: 'agents', query: { id: entityId } };
    case 'submission':
      return { name: 'submissions', query: { id: entityId } };
    case 'claim':
      return { name: 'claims', query: { id: entityId } };
    case 'api_key':
      return { name: 'api-keys', query: { id: entityId } };
    case 'account':
      return { name: 'accounts', query: { q: entityId } };
    default:
      return null;
  }
}

const ENTITY_LABELS: Record<string, string> = {
  agent: 'Agent',
  api_key: 'API key',
  submission: 'Submission',
  claim: 'Claim',
  review: 'Review',
  newsletter: 'Newsletter',
  marketing_post: 'Marketing post',
  ab_test: 'A/B test',
  webhook_endpoint: 'Webhook endpoint',
  webhook_delivery: 'Webhook delivery',
  import: 'Import',
  account: 'Account',
};

export function entityLabel(entityType: string): string {
  return ENTITY_LABELS[entityType] ?? entityType.replace(/_/g, ' ');
}

export type ActionTone = 'success' | 'error' | 'warning' | 'info' | 'default';

/**
 * Who did it, as a person reads it: an account is audited as "<e-mail> (<account id>)", shown as its e-mail
 * (the id stays in the tooltip and the drawer); "admin-token", "cli" and the like stay as they are.
 */
export function actorLabel(actor: string): { label: string; accountId: string | null } {
  const match = /^(.+) \((acc_[^)\s]+)\)$/.exec(actor);
  return match ? { label: match[1]!, accountId: match[2]! } : { label: actor, accountId: null };
}

/** The colour of an action's tag: green for what adds or approves, red for what takes away. */
export function actionTone(action: string): ActionTone {
  const verb = action.slice(action.indexOf('.') + 1);
  if (/^(create|approve|verify|list|enable|complete|unhide)$/.test(verb)) return 'success';
  if (/^(revoke|reject|delete|unlist|disable|hide|unverify|rotate_secret|redeliver_failed)$/.test(verb)) return 'error';
  if (/^(export|reveal_secret)$/.test(verb)) return 'warning';
  if (/^(update|import|record_result|check|redeliver|test|roles)$/.test(verb)) return 'info';
  return 'default';
}
