import { computed, shallowRef } from 'vue';

/** How long a decision waits before it is sent, so that a slip of the key can be taken back. */
export const UNDO_WINDOW_MS = 5000;

interface Held {
  commit: () => Promise<void>;
  undo: () => void;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * Decisions held back for a short window before they are sent (as mail clients hold a sent mail): the screen
 * shows the result at once, `undo` within the window takes it back and nothing reaches the server. Held
 * decisions are sent when the window ends, or at once by `flush` (before the page goes away).
 */
export function createUndoWindow(windowMs = UNDO_WINDOW_MS) {
  const held = shallowRef(new Map<string, Held>());
  const order: string[] = [];

  function release(key: string): Held | undefined {
    const entry = held.value.get(key);
    if (!entry) return undefined;
    clearTimeout(entry.timer);
    const next = new Map(held.value);
    next.delete(key);
    held.value = next;
    order.splice(order.indexOf(key), 1);
    return entry;
  }

  /** Holds `commit` for the window; `undo` runs instead if the decision is taken back. */
  function hold(key: string, commit: () => Promise<void>, undo: () => void): void {
    release(key)?.undo();
    const timer = setTimeout(() => void release(key)?.commit(), windowMs);
    held.value = new Map(held.value).set(key, { commit, undo, timer });
    order.push(key);
  }

  /** Takes back one held decision; false when it was already sent. */
  function undo(key: string): boolean {
    const entry = release(key);
    entry?.undo();
    return entry !== undefined;
  }

  /** Takes back the latest held decision, if any; returns its key. */
  function undoLatest(): string | null {
    const key = order[order.length - 1];
    return key !== undefined && undo(key) ? key : null;
  }

  /** Sends every held decision now. */
  async function flush(): Promise<void> {
    await Promise.all([...held.value.keys()].map((key) => release(key)?.commit()));
  }

  return { hold, undo, undoLatest, flush, holding: computed(() => held.value.size > 0), windowMs };
}
