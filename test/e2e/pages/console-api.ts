import { expect, type APIRequestContext, type Page, type Route } from '@playwright/test';

/** Helpers shared by the keys, newsletter and audit-log specs: the console's tRPC API and screen states. */

const adminToken = () => process.env.AGENTDIR_E2E_ADMIN_TOKEN!;

/** Calls the console's tRPC API as the web build does (the admin token, one procedure per request). */
export async function trpc<T>(
  request: APIRequestContext,
  procedure: string,
  input?: unknown,
  kind: 'query' | 'mutation' = 'query',
): Promise<T> {
  const headers = { authorization: `Bearer ${adminToken()}` };
  const response =
    kind === 'query'
      ? await request.get(`/trpc/${procedure}${input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`}`, {
          headers,
        })
      : await request.post(`/trpc/${procedure}`, { headers, data: input ?? {} });
  expect(response.status(), await response.text()).toBe(200);
  return (await response.json()).result.data as T;
}

type BatchAnswer = { data: unknown } | { error: { message: string; code: string; status: number } };

/**
 * Answers the console's batched tRPC calls to `procedures` with made-up results
 * (empty lists, failures), to show the screens' empty and error states.
 * Other procedures in the same batch get the real answer.
 */
export async function mockProcedures(page: Page, answers: Record<string, BatchAnswer>): Promise<() => Promise<void>> {
  const namesOf = (url: URL) => decodeURIComponent(url.pathname.split('/').pop() ?? '').split(',');
  const matches = (url: URL) => url.pathname.startsWith('/trpc/') && namesOf(url).some((name) => name in answers);
  const handler = async (route: Route) => {
    const names = namesOf(new URL(route.request().url()));
    const real = names.some((name) => !(name in answers)) ? await (await route.fetch()).json() : [];
    let status = 200;
    const body = names.map((name, index) => {
      const answer = answers[name];
      if (!answer) return real[index];
      if ('data' in answer) return { result: { data: answer.data } };
      status = answer.error.status;
      return {
        error: {
          message: answer.error.message,
          code: -32603,
          data: { code: answer.error.code, httpStatus: answer.error.status, trpcCode: 'INTERNAL_SERVER_ERROR', title: 'Internal error' },
        },
      };
    });
    await route.fulfill({ status, contentType: 'application/json', body: JSON.stringify(body) });
  };
  await page.route(matches, handler);
  return () => page.unroute(matches, handler);
}

export const serverError: BatchAnswer = {
  error: { message: 'Something went wrong on our side; it has been logged', code: 'internal_error', status: 500 },
};

/** Waits for finite CSS transitions and animations (modal and drawer entrances) to end, so screenshots are not caught mid-fade. */
export async function settled(page: Page): Promise<void> {
  // A string, run in the page: the tests are compiled without the DOM's types.
  await page.evaluate(`Promise.all(
    document
      .getAnimations()
      .filter((animation) => animation.effect?.getComputedTiming().iterations !== Infinity)
      .map((animation) => animation.finished.catch(() => undefined)),
  )`);
}
