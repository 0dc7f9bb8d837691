import { useMessage } from 'naive-ui';
import { watch, type Ref } from 'vue';
import { useRouter } from 'vue-router';
import { endsSession, useSessionStore } from '../../stores/session-store';
import type { ActionOutcome } from '../../stores/submissions-store';
import type { ConsoleError } from '../../trpc';

/** The parts of a queue's store the screen drives. */
export interface QueueScreenStore {
  readonly selectedId: string | null;
  select(id: string | null): void;
  moveSelection(delta: number): void;
}

export interface QueueScreenOptions {
  store: QueueScreenStore;
  /** The list, which scrolls a row into view (and loads pages up to it). */
  list: Ref<{ reveal(id: string): unknown } | null>;
  /** The store's load error: a refused session leads back to sign-in. */
  error: Ref<ConsoleError | null>;
  /** "claim", "submission": how the conflict warning names the item. */
  noun: string;
  /** A screen's own wording for some failures (say, what a verification found); the server's message otherwise. */
  describeFailure?: (error: ConsoleError) => string | undefined;
}

/**
 * What the claims and submissions screens do alike: move and reveal the
 * selection, go back to sign-in when the server refuses the session, and tell
 * the moderator why an action did not land.
 */
export function useQueueScreen({ store, list, error, noun, describeFailure }: QueueScreenOptions) {
  const message = useMessage();
  const session = useSessionStore();
  const router = useRouter();

  /** A refused token (the server restarted with another) leads back to sign-in; the desktop app keeps its own. */
  async function signOutIfRefused(current: ConsoleError | null): Promise<boolean> {
    if (!endsSession(current?.code) || session.isDesktop) return false;
    session.signOut();
    await router.replace({ name: 'sign-in', query: { redirect: router.currentRoute.value.fullPath, expired: '1' } });
    return true;
  }
  watch(error, (current) => void signOutIfRefused(current));

  /** Feedback for an action that did not land ("busy" says nothing: the first press is still working). */
  async function reportFailure(outcome: ActionOutcome<unknown>): Promise<void> {
    if (outcome.ok || outcome.error.code === 'busy') return;
    if (await signOutIfRefused(outcome.error)) return;
    if (outcome.conflict) message.warning(`Changed by another moderator: the ${noun} was reloaded. Review it again.`, { duration: 6000 });
    else message.error(describeFailure?.(outcome.error) ?? outcome.error.message, { duration: 6000 });
  }

  function reveal(id: string | null): void {
    if (id) void list.value?.reveal(id);
  }

  return {
    reportFailure,
    reveal,
    selectAndReveal(id: string | null): void {
      store.select(id);
      reveal(id);
    },
    move(delta: number): void {
      store.moveSelection(delta);
      reveal(store.selectedId);
    },
  };
}
