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

export const PROOF_METHODS = ['repository-file', 'dns-txt', 'well-known'] as const;
export const proofMethodNameSchema = z
  .enum(PROOF_METHODS)
  .describe(
    '`repository-file`: the token in `.well-known/agent-directory-claim.txt` of the repository (GitHub, GitLab, Codeberg sources); ' +
      '`dns-txt`: a TXT record `agent-directory-claim=<token>` at `_agent-directory-claim.<host>`; ' +
      '`well-known`: the token in `/.well-known/agent-directory-claim.txt` on the source’s origin',
  );

export const PROOF_FAILURES = [
  'dns_timeout',
  'dns_error',
  'dns_no_record',
  'http_status',
  'redirect',
  'too_large',
  'token_missing',
  'timeout',
  'refused',
  'connection',
] as const;

export const proofResultSchema = z
  .object({
    method: proofMethodNameSchema,
    ok: z.boolean(),
    http_status: z.number().int().nullable().describe('HTTP status of the response, null when none came back (or for DNS)'),
    failure: z.enum(PROOF_FAILURES).nullable().describe('Why the proof did not hold, null when it held'),
    detail: z.string().describe('What was found, in words'),
  })
  .meta({ id: 'ProofResult', description: 'What checking one proof method found' });

export const claimCheckSchema = z
  .object({
    checked_at: isoDateTimeSchema,
    ok: z.boolean().describe('Whether any proof held'),
    method: proofMethodNameSchema.nullable().describe('The method whose proof held, null when none did'),
    http_status: z.number().int().nullable().describe('HTTP status of the first method’s response, null when none came back'),
    detail: z.string().describe('What the check found, in words: each method’s result when none held'),
    results: z.array(proofResultSchema).describe('Every method tried, in the order of `verification.methods`'),
  })
  .meta({ id: 'ClaimCheck', description: 'The result of the last check of the claim’s proofs' });

/** A proof as shown publicly: where to look, never the token. */
export const publicProofMethodSchema = z
  .object({
    method: proofMethodNameSchema,
    url: z.string().optional().describe('The file that must contain the token (repository-file, well-known)'),
    name: z.string().optional().describe('The DNS name whose TXT record must hold `value` (dns-txt)'),
  })
  .meta({ id: 'PublicProofMethod' });

export const proofMethodSchema = z
  .object({
    method: proofMethodNameSchema,
    url: z.string().optional().describe('The file that must contain the token (repository-file, well-known)'),
    name: z.string().optional().describe('The DNS name whose TXT record must hold `value` (dns-txt)'),
    value: z.string().optional().describe('The exact TXT record value (dns-txt)'),
  })
  .meta({ id: 'ProofMethod', description: 'One way to prove control of the agent’s source' });

const claimFields = {
  id: z.string(),
  agent_id: z.string(),
  status: claimStatusSchema,
  verified_by: z.enum(['automatic', 'manual']).nullable().describe('"automatic" (token found) or "manual" (a moderator decided)'),
  verified_method: proofMethodNameSchema.nullable().describe('The proof that held when the claim was verified automatically'),
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
      method: proofMethodNameSchema.describe('The first (preferred) proof method'),
      url: z.string().optional().describe('Where the first method’s file must be served'),
      methods: z.array(publicProofMethodSchema).describe('Every proof that fits the source; any one of them verifies the claim'),
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
      method: proofMethodNameSchema.describe('The first (preferred) proof method'),
      url: z.string().optional().describe('Where the first method’s file must be served'),
      token: z.string().describe('The secret to publish; shown only in this response'),
      methods: z.array(proofMethodSchema).describe('Every proof that fits the source; any one of them verifies the claim'),
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
  /** Competing claims side by side: the agents with the newest claims first, each agent's claims together, newest first. */
  group_by_agent: z.boolean().optional(),
});
export type ListClaimsQuery = z.infer<typeof listClaimsQuerySchema>;

/** The console's view of a claim: everything, including the token, the e-mail address and the version. */
export interface AdminClaim extends Omit<NewClaim, 'verification'> {
  agent_name: string | null;
  /** Other pending claims on the same agent: verifying one rejects the others. */
  competing_claims: number;
  verification: Omit<NewClaim['verification'], 'instructions'>;
  version: number;
}
