import { NButton, useMessage } from 'naive-ui';
import { h, onBeforeUnmount, onMounted } from 'vue';

/** What a queue store exposes of its held decisions (composables/use-held-decisions). */
export interface HeldDecisionControls {
  readonly holdingDecisions: boolean;
  readonly undoWindowMs: number;
  undoDecision(id: string): boolean;
  sendHeldDecisions(): Promise<void>;
}

/**
 * The screen side of held decisions, shared by the submissions and claims queues: a toast with Undo
 * (and `z`) while a decision is held, and held decisions sent (the browser asking first) when the
 * window is closed within the undo window.
 */
export function useHeldDecisionToast(controls: HeldDecisionControls) {
  const message = useMessage();

  function warnIfHolding(event: BeforeUnloadEvent): void {
    if (!controls.holdingDecisions) return;
    void controls.sendHeldDecisions();
    event.preventDefault();
  }
  onMounted(() => window.addEventListener('beforeunload', warnIfHolding));
  onBeforeUnmount(() => window.removeEventListener('beforeunload', warnIfHolding));

  /** Shows "`text` Undo (z)" while the decision on `id` is held; resolves to what `pending` resolves to. */
  async function whileHeld<R>(id: string, text: string, pending: Promise<R>): Promise<R> {
    const toast = message.info(
      () =>
        h('span', { class: 'undo-toast' }, [
          `${text} `,
          h(
            NButton,
            { text: true, type: 'primary', 'data-testid': 'undo-decision', onClick: () => controls.undoDecision(id) },
            () => 'Undo',
          ),
          ' (z)',
        ]),
      { duration: controls.undoWindowMs + 500 },
    );
    try {
      return await pending;
    } finally {
      toast.destroy();
    }
  }

  return { whileHeld };
}
