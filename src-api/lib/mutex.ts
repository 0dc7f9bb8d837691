/**
 * A first-come, first-served async lock. The SQLite store holds it for the
 * whole of a transaction, so that the one connection never runs another
 * caller's statement between BEGIN and COMMIT. `locked` stays true while the
 * lock is handed from one holder to the next, so a caller seeing it false may
 * run a synchronous statement at once without queueing.
 */
export interface Mutex {
  readonly locked: boolean;
  /** Resolves when the lock is ours, with the function that gives it back (once). */
  acquire(): Promise<() => void>;
}

export function createMutex(): Mutex {
  const waiting: Array<() => void> = [];
  let locked = false;

  const releaser = () => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = waiting.shift();
      if (next) next();
      else locked = false;
    };
  };

  return {
    get locked() {
      return locked;
    },
    acquire() {
      if (!locked) {
        locked = true;
        return Promise.resolve(releaser());
      }
      return new Promise((resolve) => waiting.push(() => resolve(releaser())));
    },
  };
}
