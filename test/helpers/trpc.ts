/**
 * The console's tRPC API over real HTTP, as the API tests call it: one procedure per request
 * (GET with `?input=` for a query, POST with a JSON body for a mutation), the admin token or any
 * other headers (a session cookie, an Origin), and every answer as status, body, data and error.
 */

/* eslint-disable @typescript-eslint/no-explicit-any -- answers are checked by each test */
export interface TrpcAnswer {
  status: number;
  headers: Headers;
  /** The parsed JSON body (the text when it is not JSON). */
  body: any;
  /** `result.data` of a success. */
  data: any;
  /** The tRPC error of a failure; a non-tRPC failure's whole body (a problem+json from a hook). */
  error: any;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

export type TrpcKind = 'query' | 'mutation';

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** One call; `input` undefined sends no `?input=` on a query and `{}` on a mutation. */
export async function trpcCall(
  origin: string,
  kind: TrpcKind,
  procedure: string,
  input?: unknown,
  headers: Record<string, string> = {},
): Promise<TrpcAnswer> {
  const response =
    kind === 'query'
      ? await fetch(`${origin}/trpc/${procedure}${input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`}`, {
          headers,
        })
      : await fetch(`${origin}/trpc/${procedure}`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify(input ?? {}),
        });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: the text itself
  }
  const parsed = (body ?? {}) as { result?: { data?: unknown }; error?: unknown };
  return {
    status: response.status,
    headers: response.headers,
    body,
    data: parsed.result?.data,
    error: parsed.error ?? (response.ok ? undefined : body),
  };
}

/**
 * `query` and `mutation` bound to a server (its origin read at call time, as servers start in
 * `beforeAll`) and to the admin token or other headers.
 */
export function trpcClient(origin: () => string, auth: string | Record<string, string> = {}) {
  const headers = typeof auth === 'string' ? bearer(auth) : auth;
  return {
    query: (procedure: string, input?: unknown) => trpcCall(origin(), 'query', procedure, input, headers),
    mutation: (procedure: string, input?: unknown) => trpcCall(origin(), 'mutation', procedure, input, headers),
  };
}
