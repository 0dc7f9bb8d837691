/**
 * Background jobs in progress in this process (the start-up warm-ups, the
 * trust score refresh), as the `agentdir_background_jobs` gauge of /metrics,
 * so a benchmark or a deploy script can wait for the server to settle.
 * (Not in /health: the contract fixes that body's shape.)
 */
export interface BackgroundWork {
  /** Marks a job as started; call the returned function when it ends (later calls do nothing). */
  begin(): () => void;
  /** Jobs in progress now; 0 when the server has settled. */
  readonly running: number;
}

export function createBackgroundWork(): BackgroundWork {
  let running = 0;
  return {
    begin() {
      running++;
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        running--;
      };
    },
    get running() {
      return running;
    },
  };
}
