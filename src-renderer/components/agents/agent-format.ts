/** Display helpers for agents and their reviews. */
import { plural } from '../../shared/plural';

export { plural };

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
