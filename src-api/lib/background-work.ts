/**
 * Background jobs in progress in this process (the start-up warm-ups, the
 * trust score refresh): `/health` says `idle` when there are none, so a
 * benchmark or a deploy script can wait for the server to settle.
 */
export interface BackgroundWork {
  /** Marks a job as started; call the returned function when it ends (later calls do nothing). */
  begin(): () => void;
  /** True when no job is in progress. */
  readonly idle: boolean;
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
    get idle() {
      return running === 0;
    },
  };
}
