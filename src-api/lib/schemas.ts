import { z } from 'zod';

/** Shared zod building blocks of the REST and tRPC schemas. */

/** Scheme, "//" and a host: what the WHATWG parser would also accept without them (`http:x`) is refused. */
const HTTP_URL_START = '^\\s*[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+';

/** An absolute http(s) URL, as the contract requires of every URL a client gives. */
export const httpUrlSchema = z
  .string()
  .trim()
  .max(2048)
  .refine((value) => {
    if (!new RegExp(HTTP_URL_START).test(value)) return false;
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
    } catch {
      return false;
    }
  }, 'must be an absolute http or https URL')
  // The refinement is invisible to the OpenAPI document: the same rule, said there.
  .meta({ format: 'uri', pattern: HTTP_URL_START });

export const emailSchema = z.string().trim().max(254).email('must be an e-mail address');

/** Opaque resource ids: URL-safe characters only, so odd input never reaches a query as-is. */
export const idParamSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9_-]+$/, 'must contain only letters, digits, "-" and "_"');

export const isoDateTimeSchema = z.string().describe('ISO 8601 UTC date-time ending in Z');

export const pageQuerySchema = z.object({
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});
export type PageQuery = z.infer<typeof pageQuerySchema>;

/**
 * Comma-separated (or repeated) query values: "a,b" and ["a","b"] both become ["a","b"].
 * `docs` puts in the OpenAPI document what the transform hides from it: the characters a value may
 * hold (`pattern`, commas and blanks included) and how many values are taken (`maxItems`, when a
 * service enforces it with its own error code).
 */
export function commaListSchema(item: z.ZodString = z.string(), docs: { pattern?: string; maxItems?: number } = {}) {
  const raw = docs.pattern === undefined ? z.string() : z.string().meta({ pattern: docs.pattern });
  return z
    .union([raw, z.array(raw).meta(docs.maxItems === undefined ? {} : { maxItems: docs.maxItems })])
    .transform((value) =>
      (Array.isArray(value) ? value : [value])
        .flatMap((part) => part.split(','))
        .map((part) => part.trim())
        .filter((part) => part.length > 0),
    )
    .pipe(z.array(item));
}

export const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string(),
    errors: z.array(z.object({ pointer: z.string(), detail: z.string() })).optional(),
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details' });

export interface Page<T> {
  items: T[];
  page: number;
  limit: number;
  total: number;
}
