import { formatDateTime, formatDateTimeSeconds, formatRelative } from './dates';

/** "just now", "5 minutes ago", "yesterday", "in 2 hours": how long ago an ISO time was, for people. */
export const relativeTime = formatRelative;

/** The absolute time in the one format of `dates.ts`, with seconds unless asked not to. */
export function localTime(iso: string, withSeconds = true): string {
  return withSeconds ? formatDateTimeSeconds(iso) : formatDateTime(iso);
}
