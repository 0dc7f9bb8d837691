import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { defineStore } from 'pinia';
import { computed, reactive, ref, shallowRef } from 'vue';
import type { AppRouter } from '../../src-api/trpc/root';
import { toConsoleError, trpc, type ConsoleError } from '../trpc';

type Outputs = inferRouterOutputs<AppRouter>['agents'];
type Inputs = inferRouterInputs<AppRouter>['agents'];
/** An agent as the console edits it: the public profile plus `listed` and `version`. */
export type AdminAgent = Outputs['get'];
export type AgentType = AdminAgent['type'];
export type AgentSort = NonNullable<Exclude<Inputs['browse'], void>['sort']>;
/** A row of the agents table: browse rows carry moderation fields, search hits a relevance score. */
export type AgentListRow = Outputs['search']['agents'][number] | Outputs['browse']['agents'][number];

/** The public search returns at most this many hits; the table pages through them locally. */
export const SEARCH_LIMIT = 100;

export interface AgentFilters {
  text: string;
  type: AgentType | null;
  sort: AgentSort;
  order: 'asc' | 'desc';
  includeUnlisted: boolean;
}

/**
 * The agents screen's table: filters, the current page, and the vocabulary
 * (types, known categories) the filters and the edit form offer. Kept in a
 * store so that a moderator who leaves the screen comes back to the same view.
 *
 * Free text over listed agents uses the public search (typo-tolerant, best
 * first, top 100); with unlisted agents included it is a plain substring
 * filter over id, name, tagline and author, paged by the server.
 */
export const useAgentsStore = defineStore('agents', () => {
  const filters = reactive<AgentFilters>({ text: '', type: null, sort: 'updated_at', order: 'desc', includeUnlisted: false });
  const page = ref(1);
  const pageSize = ref(20);
  const rows = shallowRef<AgentListRow[]>([]);
  const total = ref(0);
  /** Matches the search found, which can exceed the hits it returns. */
  const searchMatches = ref(0);
  const loading = ref(false);
  const loaded = ref(false);
  const error = ref<ConsoleError | null>(null);
  const types = shallowRef<AgentType[]>([]);
  const categories = shallowRef<string[]>([]);

  const mode = computed<'search' | 'browse'>(() => (filters.text.trim() && !filters.includeUnlisted ? 'search' : 'browse'));
  let searchHits: AgentListRow[] = [];
  let request = 0;

  async function load(): Promise<void> {
    const mine = ++request;
    loading.value = true;
    error.value = null;
    try {
      const text = filters.text.trim();
      const type = filters.type ?? undefined;
      if (mode.value === 'search') {
        const result = await trpc.agents.search.query({ query: text, type, limit: SEARCH_LIMIT });
        if (mine !== request) return;
        searchHits = result.agents;
        searchMatches.value = result.total;
        total.value = searchHits.length;
        const maxPage = Math.max(1, Math.ceil(total.value / pageSize.value));
        if (page.value > maxPage) page.value = maxPage;
        rows.value = searchHits.slice((page.value - 1) * pageSize.value, page.value * pageSize.value);
      } else {
        const result = await trpc.agents.browse.query({
          q: text || undefined,
          type,
          sort: filters.sort,
          order: filters.order,
          visibility: filters.includeUnlisted ? 'all' : 'listed',
          page: page.value,
          limit: pageSize.value,
        });
        if (mine !== request) return;
        searchHits = [];
        rows.value = result.agents;
        total.value = result.total;
        searchMatches.value = result.total;
      }
      loaded.value = true;
    } catch (cause) {
      if (mine === request) error.value = toConsoleError(cause);
    } finally {
      if (mine === request) loading.value = false;
    }
  }

  /** Filters changed: back to the first page. */
  function applyFilters(): Promise<void> {
    page.value = 1;
    return load();
  }

  function setPage(next: number): Promise<void> {
    page.value = next;
    if (mode.value === 'search' && searchHits.length) {
      rows.value = searchHits.slice((next - 1) * pageSize.value, next * pageSize.value);
      return Promise.resolve();
    }
    return load();
  }

  function setPageSize(size: number): Promise<void> {
    pageSize.value = size;
    page.value = 1;
    return load();
  }

  /** An agent changed in the drawer: the table shows the new values without a reload. */
  function put(agent: AdminAgent): void {
    const merge = (row: AgentListRow): AgentListRow => (row.id === agent.id ? { ...row, ...agent } : row);
    rows.value = rows.value.map(merge);
    searchHits = searchHits.map(merge);
  }

  /** Types for the filter and the form, and known categories as tag suggestions (from the directory stats). */
  async function loadVocabulary(): Promise<void> {
    if (types.value.length) return;
    const stats = await trpc.stats.directory.query();
    types.value = stats.types;
    categories.value = Object.keys(stats.by_category);
  }

  function clearFilters(): Promise<void> {
    Object.assign(filters, { text: '', type: null, includeUnlisted: false });
    return applyFilters();
  }

  return {
    filters,
    page,
    pageSize,
    rows,
    total,
    searchMatches,
    loading,
    loaded,
    error,
    mode,
    types,
    categories,
    load,
    applyFilters,
    setPage,
    setPageSize,
    put,
    loadVocabulary,
    clearFilters,
  };
});
