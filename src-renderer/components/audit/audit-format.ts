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
};

export function entityLabel(entityType: string): string {
  return ENTITY_LABELS[entityType] ?? entityType.replace(/_/g, ' ');
}

export type ActionTone = 'success' | 'error' | 'warning' | 'info' | 'default';

/** The colour of an action's tag: green for what adds or approves, red for what takes away. */
export function actionTone(action: string): ActionTone {
  const verb = action.slice(action.indexOf('.') + 1);
  if (/^(create|approve|verify|list|enable|complete|unhide)$/.test(verb)) return 'success';
  if (/^(revoke|reject|delete|unlist|disable|hide|unverify|rotate_secret|redeliver_failed)$/.test(verb)) return 'error';
  if (/^(export|reveal_secret)$/.test(verb)) return 'warning';
  if (/^(update|import|record_result|check|redeliver|test)$/.test(verb)) return 'info';
  return 'default';
}
