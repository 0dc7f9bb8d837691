import { z } from 'zod';
import { emailSchema, idParamSchema, isoDateTimeSchema, pageQuerySchema } from '../../lib/schemas';

export const CLAIM_STATUSES = ['pending', 'verified', 'rejected'] as const;
export const claimStatusSchema = z.enum(CLAIM_STATUSES);

/** Where a claimant proves control of an agent's source: `<origin of source_url>` + this path. */
export const WELL_KNOWN_CLAIM_PATH = '/.well-known/agent-directory-claim.txt';

export const createClaimBodySchema = z.strictObject({
  agent_id: idParamSchema.describe('Id of the listed agent being claimed'),
  claimant_name: z.string().trim().min(1).max(120).describe('Name of the person or organisation claiming the agent'),
  claimant_email: emailSchema.describe('Where moderators can reach the claimant; never shown publicly'),
});
export type CreateClaimInput = z.infer<typeof createClaimBodySchema>;

/** `POST /claims/{id}/verify` takes no body; no body (Fastify passes null), an empty JSON body or `{}` is accepted; any field is a 400. */
export const verifyClaimBodySchema = z.strictObject({}).nullish();

export const claimCheckSchema = z
  .object({
    checked_at: isoDateTimeSchema,
    ok: z.boolean().describe('Whether the token was found'),
    http_status: z.number().int().nullable().describe('HTTP status of the response, null when none came back'),
    detail: z.string().describe('What the check found, in words'),
  })
  .meta({ id: 'ClaimCheck', description: 'The result of the last fetch of the verification URL' });

const claimFields = {
  id: z.string(),
  agent_id: z.string(),
  status: claimStatusSchema,
  verified_by: z.enum(['automatic', 'manual']).nullable().describe('"automatic" (token found) or "manual" (a moderator decided)'),
  reason: z.string().nullable().describe('Why the claim was rejected'),
  last_check: claimCheckSchema.nullable(),
  created_at: isoDateTimeSchema,
  updated_at: isoDateTimeSchema,
  decided_at: isoDateTimeSchema.nullable(),
};

export const claimSchema = z
  .object({
    ...claimFields,
    verification: z.object({
      method: z.literal('well-known'),
      url: z.string().describe('The URL whose body must contain the token'),
    }),
  })
  .meta({
    id: 'Claim',
    description: 'An ownership claim as anyone holding its id sees it: never the token or the claimant’s e-mail address.',
  });
export type PublicClaim = z.infer<typeof claimSchema>;

export const newClaimSchema = z
  .object({
    ...claimFields,
    claimant_name: z.string(),
    claimant_email: z.string(),
    verification: z.object({
      method: z.literal('well-known'),
      url: z.string().describe('Serve a file here whose body contains the token'),
      token: z.string().describe('The secret to publish at `url`; shown only in this response'),
      instructions: z.string(),
    }),
  })
  .meta({
    id: 'NewClaim',
    description: 'A claim just made: the only response that carries the verification token and echoes the claimant’s details.',
  });
export type NewClaim = z.infer<typeof newClaimSchema>;

export const listClaimsQuerySchema = pageQuerySchema.extend({
  status: claimStatusSchema.optional(),
  agent_id: idParamSchema.optional(),
});
export type ListClaimsQuery = z.infer<typeof listClaimsQuerySchema>;

/** The console's view of a claim: everything, including the token, the e-mail address and the version. */
export interface AdminClaim extends Omit<NewClaim, 'verification'> {
  agent_name: string | null;
  verification: { method: 'well-known'; url: string; token: string };
  version: number;
}
