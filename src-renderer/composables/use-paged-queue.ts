import { computed, ref, shallowRef } from 'vue';
import { toConsoleError, type ConsoleError } from '../trpc';

/** Rows per request: the API's maximum, so 10,000 pending items are 100 calls at most, made as the moderator scrolls. */
export const PAGE_SIZE = 100;

export interface QueuePage<T> {
  items: T[];
  total: number;
}

export interface PagedQueueOptions<T> {
  /** One page of the current filter (pages count from 1). */
  fetchPage(page: number, limit: number): Promise<QueuePage<T>>;
  /** Before the selection moves to `id`: a store clears notices that belonged to the old item. */
  beforeSelect?(id: string | null): void;
  /** After a reload replaced the rows: a store drops state about rows that are gone. */
  afterReload?(rows: readonly T[]): void;
  /** After `removeRows` took rows out of the list: a store drops state about them. */
  afterRemove?(gone: ReadonlySet<string>): void;
}

/**
 * A moderation queue's list: the first page on reload, more pages as the
 * list scrolls or the selection nears the end, answers to an older filter
 * dropped, a selection that j/k move, and the ids with an action in flight
 * (so a double key press never sends two). The submissions and claims
 * stores build on it and add their own actions.
 */
export function usePagedQueue<T extends { id: string }>(options: PagedQueueOptions<T>) {
  const rows = shallowRef<T[]>([]);
  const total = ref(0);
  const loading = ref(false);
  const loadingMore = ref(false);
  const error = ref<ConsoleError | null>(null);
  const exhausted = ref(false);
  const selectedId = ref<string | null>(null);
  const busyIds = ref<ReadonlySet<string>>(new Set());
  /** Bumped on every reload, so answers to an older filter are dropped. */
  let generation = 0;

  const selected = computed(() => rows.value.find((row) => row.id === selectedId.value) ?? null);
  const selectedIndex = computed(() => rows.value.findIndex((row) => row.id === selectedId.value));

  /** The first page of the current filter, replacing what was loaded. */
  async function reload(): Promise<void> {
    const mine = ++generation;
    loading.value = true;
    error.value = null;
    exhausted.value = false;
    try {
      const page = await options.fetchPage(1, PAGE_SIZE);
      if (mine !== generation) return;
      rows.value = page.items;
      total.value = page.total;
      exhausted.value = page.items.length < PAGE_SIZE;
      if (!rows.value.some((row) => row.id === selectedId.value)) selectedId.value = rows.value[0]?.id ?? null;
      options.afterReload?.(rows.value);
    } catch (cause) {
      if (mine !== generation) return;
      error.value = toConsoleError(cause);
      rows.value = [];
      total.value = 0;
    } finally {
      if (mine === generation) loading.value = false;
    }
  }

  /**
   * The next page. Decided items leave a tab, which moves later items up on the
   * server, so the page is chosen from what is loaded now and rows already here are dropped.
   */
  async function loadMore(): Promise<void> {
    if (loading.value || loadingMore.value || exhausted.value || error.value) return;
    const mine = generation;
    loadingMore.value = true;
    try {
      const page = await options.fetchPage(Math.floor(rows.value.length / PAGE_SIZE) + 1, PAGE_SIZE);
      if (mine !== generation) return;
      const present = new Set(rows.value.map((row) => row.id));
      rows.value = [...rows.value, ...page.items.filter((row) => !present.has(row.id))];
      total.value = page.total;
      exhausted.value = page.items.length < PAGE_SIZE || rows.value.length >= page.total;
    } catch (cause) {
      if (mine === generation) error.value = toConsoleError(cause);
    } finally {
      loadingMore.value = false;
    }
  }

  function select(id: string | null): void {
    options.beforeSelect?.(id);
    selectedId.value = id;
  }

  /** j/k: the next or previous row; loads more when the selection nears the end of what is loaded. */
  function moveSelection(delta: number): void {
    if (rows.value.length === 0) return;
    const from = selectedIndex.value;
    const to = from < 0 ? 0 : Math.min(rows.value.length - 1, Math.max(0, from + delta));
    select(rows.value[to]!.id);
    if (to >= rows.value.length - 10) void loadMore();
  }

  /** Takes decided rows out of a tab they no longer belong to, keeping the selection at the same place. */
  function removeRows(ids: readonly string[]): void {
    const gone = new Set(ids);
    const index = selectedIndex.value;
    const remaining = rows.value.filter((row) => !gone.has(row.id));
    if (selectedId.value && gone.has(selectedId.value)) {
      const before = rows.value.slice(0, index).filter((row) => !gone.has(row.id)).length;
      selectedId.value = remaining[Math.min(before, remaining.length - 1)]?.id ?? null;
    }
    total.value = Math.max(0, total.value - (rows.value.length - remaining.length));
    rows.value = remaining;
    options.afterRemove?.(gone);
    if (rows.value.length < 20) void loadMore();
  }

  /** Puts a row back at `index` (an undone removal), unless it is there already. */
  function restoreRow(row: T, index: number): void {
    if (rows.value.some((other) => other.id === row.id)) return;
    const next = [...rows.value];
    next.splice(index < 0 ? 0 : Math.min(index, next.length), 0, row);
    rows.value = next;
    total.value += 1;
  }

  function replaceRow(next: T): void {
    rows.value = rows.value.map((row) => (row.id === next.id ? next : row));
  }

  /** Runs `work` for `id` unless something already runs for it; `busy` is what to answer then. */
  async function whileBusy<R>(id: string, busy: R, work: () => Promise<R>): Promise<R> {
    if (busyIds.value.has(id)) return busy;
    busyIds.value = new Set([...busyIds.value, id]);
    try {
      return await work();
    } finally {
      const next = new Set(busyIds.value);
      next.delete(id);
      busyIds.value = next;
    }
  }

  return {
    rows,
    total,
    loading,
    loadingMore,
    error,
    exhausted,
    selectedId,
    selected,
    selectedIndex,
    busyIds,
    reload,
    loadMore,
    select,
    moveSelection,
    replaceRow,
    removeRows,
    restoreRow,
    whileBusy,
  };
}

export type PagedQueue<T extends { id: string }> = ReturnType<typeof usePagedQueue<T>>;
