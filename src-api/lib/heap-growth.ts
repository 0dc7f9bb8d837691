import v8 from 'node:v8';

/**
 * How far V8 lets the old generation grow past what was live at the last full collection, in percent, for the
 * server process (`serve`): 50 lets it grow by half.
 *
 * Why: V8 picks that factor itself after each full collection, from how fast the program promotes objects to the
 * old generation against how fast it can collect them, up to 4× on a machine with memory to spare. The server
 * keeps about 80 MB live at 100,000 agents (the search index and the profile cache's keys; the profiles themselves
 * are off the heap) and that stays flat under every load of `npm run bench` (measured after a forced collection
 * after each phase). But a fast server promotes fast (~1 KB of short-lived request objects per request, at thousands
 * of requests a second), so on a quiet machine V8 chose 4× and the heap filled with up to ~250 MB of garbage before
 * its next full collection: peak RSS climbed phase by phase to 601 MB where d60f1b0, serving fewer requests a
 * second, reached 460 MB. bench/rss-phases.ts --quiet-amounts (each phase as many requests as in that bench):
 * peak 529 MB at 4× (forced), 457 at 2×, 419 at 1.5×, with the same CPU per request within the noise. At 1.5×
 * a full collection comes every ~40 MB promoted (~5 s at 8,000 requests a second; each costs ~10-30 ms of the
 * main thread, the marking mostly concurrent).
 */
export const SERVER_HEAP_GROWING_PERCENT = 50;

/**
 * Caps the heap growing factor (V8's `--heap-growing-percent`, read at every full collection, so setting it once
 * the process runs takes effect from the next one) unless the process was started with its own value (node's
 * command line or NODE_OPTIONS), which then wins. Returns whether it set it.
 */
export function capHeapGrowth(
  percent = SERVER_HEAP_GROWING_PERCENT,
  { execArgv = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? '', setFlags = v8.setFlagsFromString } = {},
): boolean {
  const given = (text: string) => /--heap[-_]growing[-_]percent\b/.test(text);
  if (execArgv.some(given) || given(nodeOptions)) return false;
  setFlags(`--heap-growing-percent=${percent}`);
  return true;
}
