import { z } from 'zod';
import { emailSchema, isoDateTimeSchema, pageQuerySchema } from '../../lib/schemas';
import { ACCOUNT_ROLES } from './accounts.table';

export const accountRoleSchema = z.enum(ACCOUNT_ROLES);

export const accountSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    email_verified: z.boolean(),
    roles: z.array(accountRoleSchema).describe('Empty for developers; "moderator" and "admin" open the console'),
    created_at: isoDateTimeSchema,
  })
  .meta({ id: 'Account' });
export type Account = z.infer<typeof accountSchema>;

/** The console's view of an account (admins only). */
export const adminAccountSchema = accountSchema.extend({
  disabled: z.boolean(),
  updated_at: isoDateTimeSchema,
});
export type AdminAccount = z.infer<typeof adminAccountSchema>;

const nameSchema = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');
/** Length and the common list are checked by the service, as 400 weak_password; this only bounds the input. */
const passwordSchema = z.string().max(1000).describe('10–200 characters, not a common password');

export const signUpInputSchema = z.strictObject({
  email: emailSchema,
  password: passwordSchema,
  name: nameSchema,
});
export type SignUpInput = z.infer<typeof signUpInputSchema>;

export const tokenInputSchema = z.strictObject({ token: z.string().min(1).max(200).describe('The token from the link in the mail') });

export const signInInputSchema = z.strictObject({ email: emailSchema, password: z.string().max(1000) });

export const passwordResetInputSchema = z.strictObject({ email: emailSchema });

export const passwordResetConfirmInputSchema = z.strictObject({
  token: z.string().min(1).max(200).describe('The token from the link in the reset mail'),
  password: passwordSchema,
});

export const updateAccountInputSchema = z.strictObject({ name: nameSchema });

export const verificationSentSchema = z.object({ status: z.literal('verification_sent') }).meta({ id: 'VerificationSent' });
export const resetSentSchema = z.object({ status: z.literal('reset_sent') }).meta({ id: 'PasswordResetSent' });
export const sessionSchema = z.object({ account: accountSchema }).meta({ id: 'Session' });

export const listAccountsQuerySchema = pageQuerySchema.extend({
  /** Part of the e-mail or the name, case-insensitive, or an exact account id. */
  q: z.string().trim().max(254).optional(),
  role: accountRoleSchema.optional(),
});
export type ListAccountsQuery = z.infer<typeof listAccountsQuerySchema>;
