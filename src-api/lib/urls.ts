/**
 * A canonical form of a source URL, so that "https://GitHub.com/a/b/",
 * "http://github.com/a/b" and "https://github.com/a/b.git" count as the same
 * agent when looking for duplicates.
 */
export function sourceUrlKey(raw: string): string {
  const url = new URL(raw);
  const host = url.hostname.toLowerCase().replace(/^www\./, '');
  const port = url.port ? `:${url.port}` : '';
  const pathname = url.pathname.replace(/\/+$/, '').replace(/\.git$/, '');
  return `${host}${port}${pathname}${url.search}`;
}

/** Origin of a URL: scheme, host and port. */
export function originOf(raw: string): string {
  return new URL(raw).origin;
}
