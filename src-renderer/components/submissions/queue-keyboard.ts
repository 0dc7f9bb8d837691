import { onBeforeUnmount, onMounted } from 'vue';

/** One shortcut of a moderation queue, as the help overlay lists it. */
export interface QueueShortcut {
  keys: string[];
  description: string;
}

export interface QueueKeyboardOptions {
  /** Key (KeyboardEvent.key) → what it does. */
  handlers: Record<string, () => void>;
  /** While true (a dialog is open), only `always` keys are handled. */
  suspended: () => boolean;
  /** Keys handled even while suspended, e.g. "?" to close the help. */
  always?: string[];
  /** Keys that act again while held down (moving the selection); others act once per press. */
  repeatable?: string[];
}

/** Typing in a field, a select or an editable element is never a shortcut. */
export function isTypingTarget(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  const tag = target.tagName;
  return tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT';
}

/**
 * Single-key shortcuts for a queue screen, listening on the window while the
 * screen is mounted. Keys with Ctrl, Meta or Alt are left to the browser.
 */
export function useQueueKeyboard(options: QueueKeyboardOptions): void {
  function onKeydown(event: KeyboardEvent): void {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    if (event.repeat && !options.repeatable?.includes(event.key)) return;
    if (isTypingTarget(event.target)) return;
    const handler = options.handlers[event.key];
    if (!handler) return;
    if (options.suspended() && !options.always?.includes(event.key)) return;
    event.preventDefault();
    handler();
  }
  onMounted(() => window.addEventListener('keydown', onKeydown));
  onBeforeUnmount(() => window.removeEventListener('keydown', onKeydown));
}
