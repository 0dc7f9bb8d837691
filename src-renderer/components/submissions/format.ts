/** Small display helpers shared by the moderation queues. */

/** "github.com/acme/tool" for display; the raw text when it is not a URL. */
export function shortUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.host.replace(/^www\./, '')}${url.pathname.replace(/\/$/, '')}`;
  } catch {
    return raw;
  }
}

export { plural } from '../../shared/plural';
