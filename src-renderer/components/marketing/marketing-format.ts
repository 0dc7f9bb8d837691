/** Display helpers for marketing posts and A/B tests. */

type TagType = 'default' | 'info' | 'success' | 'warning' | 'error';

const STATUS_TAGS: Record<string, TagType> = { draft: 'default', scheduled: 'info', published: 'success', archived: 'warning' };
const CHANNEL_LABELS: Record<string, string> = { twitter: 'Twitter / X', linkedin: 'LinkedIn', blog: 'Blog', newsletter: 'Newsletter' };

export function statusTagType(status: string): TagType {
  return STATUS_TAGS[status] ?? 'default';
}

export function capitalize(value: string): string {
  return value.charAt(0).toUpperCase() + value.slice(1);
}

export function channelLabel(channel: string): string {
  return CHANNEL_LABELS[channel] ?? capitalize(channel);
}

/** 0.04567 → "4.57%". */
export function percent(rate: number, digits = 2): string {
  return `${(rate * 100).toFixed(digits)}%`;
}

/** p-values as people read them: "< 0.001", "0.032", "0.41". */
export function formatPValue(p: number | undefined): string {
  if (p === undefined) return '—';
  if (p < 0.001) return '< 0.001';
  return p < 0.1 ? p.toFixed(3) : p.toFixed(2);
}

/** The first words of a text, on one line. */
export function excerpt(text: string, length = 110): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > length ? `${flat.slice(0, length - 1)}…` : flat;
}

/** Twitter cuts posts longer than this; the editor warns before it happens. */
export const TWITTER_LIMIT = 280;
