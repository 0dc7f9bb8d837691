import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** The token of an `Authorization: Bearer <token>` header, if that is what it holds. */
export function bearerToken(authorization: string | string[] | undefined): string | undefined {
  if (typeof authorization !== 'string') return undefined;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization.trim());
  return match?.[1];
}

/** Compares in constant time: both sides are hashed first, so neither the content nor the length leaks. */
export function isAdminToken(candidate: string | undefined, adminToken: string): boolean {
  if (candidate === undefined) return false;
  return timingSafeEqual(digest(candidate), digest(adminToken));
}
