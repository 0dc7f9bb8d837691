import type { ActionOutcome } from '../stores/submissions-store';
import { createUndoWindow } from '../shared/undo/undo-window';
import type { PagedQueue } from './use-paged-queue';

export interface HeldDecisionsOptions<T extends { id: string }> {
  queue: PagedQueue<T>;
  /** Shows an item as it is now (after a decision that failed on a conflict). */
  reloadItem(id: string): Promise<unknown>;
}

/**
 * Decisions of a moderation queue with a short window to take them back (shared by the submissions and
 * claims queues): the row leaves the list at once and the decision is sent when the window ends; undone
 * within the window, the row comes back where it was and nothing reaches the server.
 */
export function useHeldDecisions<T extends { id: string }>({ queue, reloadItem }: HeldDecisionsOptions<T>) {
  const undoWindow = createUndoWindow();

  /** Holds `send` for the window; resolves to its outcome, or 'undone' if `undoDecision` came first. */
  function decideLater<R>(item: T, send: () => Promise<ActionOutcome<R>>): Promise<ActionOutcome<R> | 'undone'> {
    const index = queue.rows.value.findIndex((row) => row.id === item.id);
    const wasSelected = queue.selectedId.value === item.id;
    queue.removeRows([item.id]);
    const putBack = () => {
      queue.restoreRow(item, index);
      if (wasSelected) queue.select(item.id);
    };
    return new Promise((resolve) => {
      undoWindow.hold(
        item.id,
        async () => {
          const outcome = await send();
          if (!outcome.ok) {
            putBack();
            // The failed action reloaded the item before it was back in the list.
            if (outcome.conflict) await reloadItem(item.id);
          }
          resolve(outcome);
        },
        () => {
          putBack();
          resolve('undone');
        },
      );
    });
  }

  return {
    decideLater,
    undoDecision: undoWindow.undo,
    undoLatestDecision: undoWindow.undoLatest,
    sendHeldDecisions: undoWindow.flush,
    holdingDecisions: undoWindow.holding,
    undoWindowMs: undoWindow.windowMs,
  };
}
