/** Display helpers for agents and their reviews. */

const DATE_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const DATE = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const RELATIVE = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

export function formatDateTime(iso: string | null | undefined): string {
  return iso ? DATE_TIME.format(new Date(iso)) : '—';
}

export function formatDate(iso: string | null | undefined): string {
  return iso ? DATE.format(new Date(iso)) : '—';
}

/** "5 minutes ago", "yesterday", "3 months ago". */
export function formatRelative(iso: string, now: number = Date.now()): string {
  let value = Math.round((new Date(iso).getTime() - now) / 1000);
  const steps: [Intl.RelativeTimeFormatUnit, number][] = [
    ['second', 60],
    ['minute', 60],
    ['hour', 24],
    ['day', 30],
    ['month', 12],
    ['year', Infinity],
  ];
  for (const [unit, size] of steps) {
    if (Math.abs(value) < size) return unit === 'second' ? 'just now' : RELATIVE.format(value, unit);
    value = Math.round(value / size);
  }
  return DATE_TIME.format(new Date(iso));
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString()} ${count === 1 ? one : many}`;
}

/** "★ 4.25 · 12 reviews", or "No reviews yet". */
export function ratingText(rating: { average: number | null; count: number }): string {
  if (rating.count === 0 || rating.average === null) return 'No reviews yet';
  return `★ ${rating.average.toFixed(2)} · ${plural(rating.count, 'review')}`;
}

/** "customer-support" → "Customer support". */
export function typeLabel(type: string): string {
  const spaced = type.replace(/-/g, ' ');
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

/** True for an absolute http(s) URL, the rule the API applies to source_url. */
export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value.trim());
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
  } catch {
    return false;
  }
}
