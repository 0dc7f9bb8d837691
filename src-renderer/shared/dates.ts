/**
 * The one way both apps write dates and times: the reader's locale and clock (12- or 24-hour, as
 * their system says), medium dates, and relative times ("5 minutes ago") with the absolute time
 * a hover away (`<DateTime>`). Every screen formats through here, so no two screens disagree.
 */

const DATE_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const DATE_TIME_SECONDS = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const RELATIVE = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

/** "Nov 25, 2026, 2:05 PM" (or "25 Nov 2026, 14:05"); "—" for none. */
export function formatDateTime(iso: string | null | undefined): string {
  return iso ? DATE_TIME.format(new Date(iso)) : '—';
}

/** The same with seconds, where order within a minute matters (audit entries, delivery attempts). */
export function formatDateTimeSeconds(iso: string | null | undefined): string {
  return iso ? DATE_TIME_SECONDS.format(new Date(iso)) : '—';
}

const STEPS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['second', 60],
  ['minute', 60],
  ['hour', 24],
  ['day', 30],
  ['month', 12],
  ['year', Infinity],
];

/** "just now", "5 minutes ago", "yesterday", "in 2 hours", "3 months ago". */
export function formatRelative(iso: string, now: number = Date.now()): string {
  let value = Math.round((new Date(iso).getTime() - now) / 1000);
  for (const [unit, size] of STEPS) {
    if (Math.abs(value) < size) return unit === 'second' ? 'just now' : RELATIVE.format(value, unit);
    value = Math.round(value / size);
  }
  return formatDateTime(iso);
}
