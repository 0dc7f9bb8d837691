import type { Ref } from 'vue';
import { toConsoleError, type ConsoleError } from '../trpc';

/**
 * One moderator decision on a listed row, as the queues' stores make it: the row is busy while
 * `send` runs, the decided row replaces it in `rows`, and a row changed meanwhile (409) reloads
 * the list. Resolves to the error, or null when the decision was recorded.
 */
export async function decideRow<Row extends { id: string }>(
  state: { rows: Ref<Row[]>; busyIds: Ref<Set<string>>; reload: () => Promise<void> },
  id: string,
  send: () => Promise<Row>,
): Promise<ConsoleError | null> {
  const { rows, busyIds, reload } = state;
  busyIds.value = new Set([...busyIds.value, id]);
  try {
    const decided = await send();
    rows.value = rows.value.map((row) => (row.id === decided.id ? decided : row));
    return null;
  } catch (cause) {
    const failure = toConsoleError(cause);
    if (failure.code === 'stale_version' || failure.code === 'conflict') await reload();
    return failure;
  } finally {
    const next = new Set(busyIds.value);
    next.delete(id);
    busyIds.value = next;
  }
}
