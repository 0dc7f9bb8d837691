import { onBeforeUnmount, onMounted } from 'vue';

/** One shortcut of a moderation queue, as the help overlay lists it. */
export interface QueueShortcut {
  keys: string[];
  description: string;
}

export interface QueueKeyboardOptions {
  /** Moves the selection by one row: j/k and the arrow keys, acting again while held down. */
  move: (delta: 1 | -1) => void;
  /** Takes back the latest held decision: z. */
  undo: () => void;
  /** Shows or hides the help overlay: ?, handled even while a dialog is open (so it can close the help). */
  toggleHelp: () => void;
  /** The screen's own keys (KeyboardEvent.key) → what they do; each acts once per press. */
  actions: Record<string, () => void>;
  /** While true (a dialog is open), only "?" is handled. */
  suspended: () => boolean;
}

/**
 * What every queue's help lists: moving, the screen's own `actions`, undoing `decisions`
 * ("approve or reject"), then the help itself.
 */
export function queueShortcuts(noun: string, decisions: string, actions: QueueShortcut[]): QueueShortcut[] {
  return [
    { keys: ['j', '↓'], description: `Next ${noun}` },
    { keys: ['k', '↑'], description: `Previous ${noun}` },
    ...actions,
    { keys: ['z'], description: `Undo the last ${decisions} (for 5 seconds, before it is sent)` },
    { keys: ['?'], description: 'Show or hide this help' },
  ];
}

/** Typing in a field, a select or an editable element is never a shortcut. */
export function isTypingTarget(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  const tag = target.tagName;
  return tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT';
}

const MOVES: Record<string, 1 | -1> = { j: 1, ArrowDown: 1, k: -1, ArrowUp: -1 };

/**
 * Single-key shortcuts for a queue screen, listening on the window while the
 * screen is mounted. Keys with Ctrl, Meta or Alt are left to the browser.
 */
export function useQueueKeyboard(options: QueueKeyboardOptions): void {
  function handlerOf(key: string): (() => void) | undefined {
    const delta = MOVES[key];
    if (delta !== undefined) return () => options.move(delta);
    if (key === 'z') return options.undo;
    if (key === '?') return options.toggleHelp;
    return options.actions[key];
  }
  function onKeydown(event: KeyboardEvent): void {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    if (event.repeat && MOVES[event.key] === undefined) return;
    if (isTypingTarget(event.target)) return;
    const handler = handlerOf(event.key);
    if (!handler) return;
    if (options.suspended() && event.key !== '?') return;
    event.preventDefault();
    handler();
  }
  onMounted(() => window.addEventListener('keydown', onKeydown));
  onBeforeUnmount(() => window.removeEventListener('keydown', onKeydown));
}
