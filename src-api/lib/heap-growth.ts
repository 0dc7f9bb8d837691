import v8 from 'node:v8';

/**
 * How far V8 lets the old generation grow past what was live at the last full collection, in percent, for the
 * server process (`serve`): 100 lets it double.
 *
 * Why: V8 picks that factor itself after each full collection, from how fast the program promotes objects to the
 * old generation against how fast it can collect them, up to 4× on a machine with memory to spare. The server
 * keeps about 80 MB live at 100,000 agents (the search index and the profile cache's keys; the profiles themselves
 * are off the heap) and that stays flat under every load of `npm run bench` (measured after a forced collection
 * after each phase). But a fast server promotes fast (~1 KB of short-lived request objects per request, at thousands
 * of requests a second), so on a quiet machine V8 chose 4× and the heap filled with up to ~250 MB of garbage before
 * its next full collection: peak RSS climbed phase by phase to 601 MB where d60f1b0, serving fewer requests a
 * second, reached 460 MB. At 2× a full collection comes every ~80 MB promoted (~10 s at 8,000 requests a
 * second; each costs ~10-30 ms, mostly marked concurrently).
 */
export const SERVER_HEAP_GROWING_PERCENT = 100;

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
