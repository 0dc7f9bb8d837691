/** Small display helpers shared by the moderation queues. */

const DATE_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const RELATIVE = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

export function formatDateTime(iso: string | null | undefined): string {
  return iso ? DATE_TIME.format(new Date(iso)) : '—';
}

/** "5 min ago", "yesterday", "3 months ago". */
export function formatRelative(iso: string, now: number = Date.now()): string {
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  const steps: [Intl.RelativeTimeFormatUnit, number][] = [
    ['second', 60],
    ['minute', 60],
    ['hour', 24],
    ['day', 30],
    ['month', 12],
    ['year', Infinity],
  ];
  let value = seconds;
  for (const [unit, size] of steps) {
    if (Math.abs(value) < size) return unit === 'second' ? 'just now' : RELATIVE.format(value, unit);
    value = Math.round(value / size);
  }
  return DATE_TIME.format(new Date(iso));
}

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
