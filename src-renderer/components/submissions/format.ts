/** Small display helpers shared by the moderation queues. */

export { formatDateTime, formatRelative } from '../../shared/dates';

/** "github.com/acme/tool" for display; the raw text when it is not a URL. */
export function shortUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.host.replace(/^www\./, '')}${url.pathname.replace(/\/$/, '')}`;
  } catch {
    return raw;
  }
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString()} ${count === 1 ? one : many}`;
}
