import type { components, paths } from '../../clients/typescript/src/schema';

/**
 * The REST shapes the dashboard reads and writes (CONTRACT.md section 6: /accounts, /sessions, /me/*),
 * named as the screens know them. Each is the generated OpenAPI type (clients/typescript/src/schema.d.ts,
 * `node clients/typescript/generate.mjs` after an API change, a test says when it is stale), never a copy.
 */
type Schemas = components['schemas'];
type JsonBody<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

export type Account = Schemas['Account'];
export type Role = Account['roles'][number];
export type ApiKey = Schemas['AccountApiKey'];
/** A key just created: the only answer that carries the key itself. */
export type IssuedKey = Schemas['NewAccountApiKey'];
export type UsageDay = paths['/api/v1/me/usage']['get']['responses'][200]['content']['application/json']['days'][number];

export type AccountWebhook = Schemas['AccountWebhookEndpoint'];
/** An endpoint just created or with a rotated secret: the only answers that carry the secret. */
export type AccountWebhookWithSecret = Schemas['AccountWebhookEndpointWithSecret'];
export type WebhookScope = AccountWebhook['scope'];
export type WebhookInput = JsonBody<paths['/api/v1/me/webhooks']['post']>;
export type WebhookPatch = JsonBody<paths['/api/v1/me/webhooks/{id}']['patch']>;

/** A claim of the account (GET /me/claims): with its token, to publish until it is verified. */
export type AccountClaim = Schemas['NewClaim'];
/** An agent the account owns (GET /me/agents). */
export type OwnedAgent = Schemas['Agent'];
/** What an owner may change at once (PATCH /me/agents/{id}); a new name or source_url waits for a moderator. */
export type OwnedAgentPatch = JsonBody<paths['/api/v1/me/agents/{id}']['patch']>;
/** PATCH /me/agents/{id} when the change waits for a moderator (202). */
export type EditRequestReceipt = Schemas['EditRequestAccepted'];
/** A review of an agent as GET /agents/{id}/reviews lists it, with the owner's reply. */
export type AgentReview = Schemas['Review'];
/** A rename or source move the account asked for (GET /me/edit-requests). */
export type OwnEditRequest = Schemas['OwnerEditRequest'];
/** A newsletter address after its confirmation or unsubscribe link. */
export type NewsletterSubscription = Schemas['NewsletterSubscription'];

/** A page of a list endpoint, whatever its items are called on the wire. */
export interface ListPage<T> {
  items: T[];
  page: number;
  limit: number;
  total: number;
}
