import { randomBytes } from 'node:crypto';
import { mulberry32 } from './seeded-random';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** Random lowercase base-36 characters: URL-safe and easy to read aloud. */
export function randomToken(length: number, random: (bytes: number) => Buffer = randomBytes): string {
  const bytes = random(length);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[bytes[i]! % 36];
  return out;
}

export type IdPrefix =
  | 'rev'
  | 'sub'
  | 'clm'
  | 'evt'
  | 'key'
  | 'whk'
  | 'dlv'
  | 'att'
  | 'post'
  | 'abt'
  | 'var'
  | 'nls'
  | 'aud'
  | 'mail'
  | 'acc'
  | 'ses'
  | 'tok'
  | 'rpt'
  | 'edr'
  | 'rpl';

export interface IdGenerator {
  /** A prefixed random id, e.g. "rev_k3j9x0q2m1za". */
  next(prefix: IdPrefix): string;
  /** An agent id: a slug of the name plus a short random suffix ("code-reviewer-x8k2p1"). */
  agent(name: string): string;
}

export function slugify(text: string, maxLength = 40): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, maxLength)
    .replace(/-+$/g, '');
  return slug || 'agent';
}

export function createIdGenerator(random: (bytes: number) => Buffer = randomBytes): IdGenerator {
  return {
    next: (prefix) => `${prefix}_${randomToken(14, random)}`,
    agent: (name) => `${slugify(name)}-${randomToken(6, random)}`,
  };
}

/** Deterministic bytes from a seed (mulberry32), for demo data that is the same on every machine. */
export function seededRandomBytes(seed: number): (bytes: number) => Buffer {
  const next = mulberry32(seed);
  return (count) => {
    const buffer = Buffer.alloc(count);
    for (let i = 0; i < count; i++) buffer[i] = next() & 0xff;
    return buffer;
  };
}
