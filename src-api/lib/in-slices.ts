/** What to call when work in slices ends: done, or failed (see runInSlices). */
export interface SliceHandlers {
  onDone?: () => void;
  onError?: (error: unknown) => void;
}

/**
 * Runs `step` now and then once per event-loop turn (setImmediate), so
 * requests are served in between, until it returns true (done); then
 * `onDone`. If a step throws, the work stops there and the error goes to
 * `onError` (default: rethrown, i.e. an uncaught exception).
 * Returns a function that stops it (on close).
 */
export function runInSlices(step: () => boolean, { onDone, onError }: SliceHandlers = {}): () => void {
  let handle: NodeJS.Immediate | undefined;
  let stopped = false;
  const run = () => {
    handle = undefined;
    if (stopped) return;
    let done: boolean;
    try {
      done = step();
    } catch (error) {
      stopped = true;
      if (onError) return onError(error);
      throw error;
    }
    if (done) onDone?.();
    else handle = setImmediate(run);
  };
  run();
  return () => {
    stopped = true;
    if (handle) clearImmediate(handle);
  };
}

/**
 * runInSlices for an async step: one step at a time, the next on a later event-loop turn. The first step
 * starts at once (synchronously, up to its first await).
 */
export function runAsyncSlices(step: () => Promise<boolean>, { onDone, onError }: SliceHandlers = {}): () => void {
  let stopped = false;
  const run = async () => {
    try {
      while (!stopped) {
        // A stop that came during the step: not done, only stopped.
        if ((await step()) && !stopped) return onDone?.();
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      stopped = true;
      if (onError) return onError(error);
      throw error;
    }
  };
  void run();
  return () => {
    stopped = true;
  };
}
