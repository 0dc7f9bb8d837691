import { hash, verify } from '@node-rs/argon2';
import { WeakPasswordError } from '../../errors';
import { COMMON_PASSWORDS } from './common-passwords';

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 200;

/**
 * argon2id with the OWASP baseline (19 MiB, 2 passes, 1 lane), the library's
 * defaults spelled out so a library upgrade cannot weaken them silently.
 * About 25 ms per hash on this class of machine.
 */
const ARGON2_OPTIONS = { memoryCost: 19_456, timeCost: 2, parallelism: 1, algorithm: 2 /* Argon2id */ } as const;

/** Refuses passwords that are too short, too long, or on the common list (400 weak_password). */
export function assertStrongPassword(password: string, context: { email?: string; name?: string } = {}): void {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) throw new WeakPasswordError(`The password must be at least ${PASSWORD_MIN_LENGTH} characters long`);
  if (length > PASSWORD_MAX_LENGTH) throw new WeakPasswordError(`The password must be at most ${PASSWORD_MAX_LENGTH} characters long`);
  const lower = password.toLowerCase();
  if (COMMON_PASSWORDS.has(lower) || /^(.)\1+$/.test(password)) {
    throw new WeakPasswordError('This password is too common; choose one that is hard to guess');
  }
  if (context.email && lower === context.email.trim().toLowerCase())
    throw new WeakPasswordError('The password must not be the e-mail address');
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_OPTIONS);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;

/**
 * Spends the time of a real verification when there is no account to check
 * against, so unknown addresses answer as slowly as known ones.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummyHash ??= hashPassword('dummy password that matches no account');
  await verifyPassword(await dummyHash, password);
  return false;
}
