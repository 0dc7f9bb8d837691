import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Sets an RFC 8288 Link header with `next` and `prev` pages, keeping the other query parameters.
 * The links are relative (path and query), so the Host header plays no part and cannot make this throw.
 * `query` replaces the request's own query string (a POST search links to the same search as a GET).
 */
export function setPageLinks(
  request: FastifyRequest,
  reply: FastifyReply,
  page: { page: number; limit: number; total: number },
  query?: URLSearchParams,
): void {
  const url = new URL(request.url, 'http://localhost');
  if (query) url.search = query.toString();
  const link = (target: number, rel: string): string => {
    url.searchParams.set('page', String(target));
    url.searchParams.set('limit', String(page.limit));
    return `<${url.pathname}${url.search}>; rel="${rel}"`;
  };
  const links: string[] = [];
  const lastPage = Math.max(1, Math.ceil(page.total / page.limit));
  if (page.page < lastPage) links.push(link(page.page + 1, 'next'));
  if (page.page > 1) links.push(link(Math.min(page.page - 1, lastPage), 'prev'));
  if (links.length) reply.header('Link', links.join(', '));
}
