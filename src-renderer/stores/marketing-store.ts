import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { defineStore } from 'pinia';
import { computed, reactive, ref, shallowRef } from 'vue';
import type { AppRouter } from '../../src-api/trpc/root';
import { toConsoleError, trpc, type ConsoleError } from '../trpc';

type Outputs = inferRouterOutputs<AppRouter>['marketing'];
type Inputs = inferRouterInputs<AppRouter>['marketing'];
export type MarketingPost = Outputs['listPosts']['posts'][number];
/** A post as the console edits it: with its version and source event. */
export type AdminMarketingPost = Outputs['getPost'];
export type AbTest = Outputs['listAbTests']['ab_tests'][number];
export type MarketingMetrics = Outputs['metrics'];
export type PostStatus = MarketingPost['status'];
export type Tone = MarketingPost['tone'];
export type Channel = MarketingPost['channel'];
export type AbTestStatus = NonNullable<Exclude<Inputs['listAbTests'], void>['status']>;
export type PostDecision = Inputs['decidePosts']['decision'];
export type PostDecisionResult = Outputs['decidePosts']['results'][number];

export interface PostFilters {
  status: PostStatus | null;
  tone: Tone | null;
  channel: Channel | null;
}

/** A list that loads from the server, with its own loading and error state. */
function remoteState() {
  return { loading: ref(false), loaded: ref(false), error: ref<ConsoleError | null>(null) };
}

/**
 * The marketing screen: generated posts (filtered and paged by the server),
 * the publishing metrics and the A/B tests. The tones, channels and statuses
 * on offer come from the metrics, which list every one of them.
 */
export const useMarketingStore = defineStore('marketing', () => {
  const filters = reactive<PostFilters>({ status: null, tone: null, channel: null });
  const page = ref(1);
  const pageSize = ref(20);
  const posts = shallowRef<MarketingPost[]>([]);
  const total = ref(0);
  const postsState = remoteState();

  const metrics = shallowRef<MarketingMetrics | null>(null);
  const metricsState = remoteState();

  const abStatus = ref<AbTestStatus | null>(null);
  const abPage = ref(1);
  const abPageSize = ref(20);
  const abTests = shallowRef<AbTest[]>([]);
  const abTotal = ref(0);
  const abState = remoteState();

  const tones = computed(() => Object.keys(metrics.value?.tone_distribution ?? {}) as Tone[]);
  const channels = computed(() => Object.keys(metrics.value?.channel_distribution ?? {}) as Channel[]);
  const statuses = computed(() => Object.keys(metrics.value?.publish_counts.by_status ?? {}) as PostStatus[]);

  /** Runs a load, keeping only the answer to the latest request of its kind. */
  function tracked<T>(state: ReturnType<typeof remoteState>, counter: { n: number }, work: () => Promise<T>, apply: (value: T) => void) {
    return async (): Promise<void> => {
      const mine = ++counter.n;
      state.loading.value = true;
      state.error.value = null;
      try {
        const value = await work();
        if (mine !== counter.n) return;
        apply(value);
        state.loaded.value = true;
      } catch (cause) {
        if (mine === counter.n) state.error.value = toConsoleError(cause);
      } finally {
        if (mine === counter.n) state.loading.value = false;
      }
    };
  }

  const loadPosts = tracked(
    postsState,
    { n: 0 },
    () =>
      trpc.marketing.listPosts.query({
        status: filters.status ?? undefined,
        tone: filters.tone ?? undefined,
        channel: filters.channel ?? undefined,
        page: page.value,
        limit: pageSize.value,
      }),
    (result) => {
      posts.value = result.posts;
      total.value = result.total;
    },
  );

  const loadMetrics = tracked(
    metricsState,
    { n: 0 },
    () => trpc.marketing.metrics.query(),
    (result) => {
      metrics.value = result;
    },
  );

  const loadAbTests = tracked(
    abState,
    { n: 0 },
    () => trpc.marketing.listAbTests.query({ status: abStatus.value ?? undefined, page: abPage.value, limit: abPageSize.value }),
    (result) => {
      abTests.value = result.ab_tests;
      abTotal.value = result.total;
    },
  );

  function applyFilters(): Promise<void> {
    page.value = 1;
    return loadPosts();
  }

  function setPage(next: number): Promise<void> {
    page.value = next;
    return loadPosts();
  }

  function setPageSize(size: number): Promise<void> {
    pageSize.value = size;
    page.value = 1;
    return loadPosts();
  }

  function clearFilters(): Promise<void> {
    Object.assign(filters, { status: null, tone: null, channel: null });
    return applyFilters();
  }

  /** A post changed in the drawer: the table shows it at once; the metrics follow. */
  function putPost(post: AdminMarketingPost): void {
    posts.value = posts.value.map((row) => (row.id === post.id ? { ...row, ...post } : row));
    void loadMetrics();
  }

  /** Publishes or archives several posts; the list and metrics are reloaded, and each post's outcome returned. */
  async function decidePosts(ids: string[], decision: PostDecision): Promise<PostDecisionResult[]> {
    const { results } = await trpc.marketing.decidePosts.mutate({ ids, decision });
    await Promise.all([loadPosts(), loadMetrics()]);
    return results;
  }

  function setAbStatus(status: AbTestStatus | null): Promise<void> {
    abStatus.value = status;
    abPage.value = 1;
    return loadAbTests();
  }

  function setAbPage(next: number): Promise<void> {
    abPage.value = next;
    return loadAbTests();
  }

  async function completeAbTest(id: string): Promise<AbTest> {
    const completed = await trpc.marketing.completeAbTest.mutate({ id });
    abTests.value = abTests.value.map((test) => (test.id === id ? completed : test));
    return completed;
  }

  return {
    filters,
    page,
    pageSize,
    posts,
    total,
    postsLoading: postsState.loading,
    postsLoaded: postsState.loaded,
    postsError: postsState.error,
    metrics,
    metricsLoading: metricsState.loading,
    metricsError: metricsState.error,
    abStatus,
    abPage,
    abPageSize,
    abTests,
    abTotal,
    abLoading: abState.loading,
    abLoaded: abState.loaded,
    abError: abState.error,
    tones,
    channels,
    statuses,
    loadPosts,
    loadMetrics,
    loadAbTests,
    applyFilters,
    setPage,
    setPageSize,
    clearFilters,
    putPost,
    decidePosts,
    setAbStatus,
    setAbPage,
    completeAbTest,
  };
});
