import { count, desc, eq, inArray } from 'drizzle-orm';
import { byteOrder } from '../../db/dialect-sql';
import type { Store } from '../../db/store';
import { ConflictError, NotFoundError, ValidationError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { Page } from '../../lib/schemas';
import type { AuditService } from '../audit/audit.service';
import { abResultSchema, type AbResult, type AbTestResult, type ListAbTestsQuery } from './marketing.schemas';
import type { AbTestRow, AbTestVariantRow } from './marketing.table';
import { parseOrThrow, toAbTestResult } from './marketing.views';

/** The A/B tests between two tones of a post: the list, their results, and their counts as they come in. */
export function createAbTests({ store, clock, audit }: { store: Store; clock: Clock; audit: AuditService }) {
  /** The test; with `lock`, locked until the transaction ends (PostgreSQL), so its status holds while the caller writes. */
  const requireTest = async (id: string, { lock = false } = {}): Promise<AbTestRow> => {
    const { abTests } = store.t;
    const select = store.db.select().from(abTests).where(eq(abTests.id, id));
    const row = await store.first(lock ? store.forUpdate(select) : select);
    if (!row) throw new NotFoundError('A/B test', id);
    return row;
  };

  const variantsOf = async (testIds: string[]): Promise<Map<string, AbTestVariantRow[]>> => {
    const { abTestVariants } = store.t;
    const byTest = new Map<string, AbTestVariantRow[]>(testIds.map((id) => [id, []]));
    if (testIds.length === 0) return byTest;
    for (const variant of await store.rows(store.db.select().from(abTestVariants).where(inArray(abTestVariants.abTestId, testIds)))) {
      byTest.get(variant.abTestId)?.push(variant);
    }
    return byTest;
  };

  const getAbTest = async (id: string): Promise<AbTestResult> => {
    const test = await requireTest(id);
    return toAbTestResult(test, (await variantsOf([id])).get(id) ?? []);
  };

  return {
    async listAbTests(query: ListAbTestsQuery): Promise<Page<AbTestResult>> {
      const { abTests } = store.t;
      const where = query.status ? eq(abTests.status, query.status) : undefined;
      const tests = await store.rows(
        store.db
          .select()
          .from(abTests)
          .where(where)
          .orderBy(desc(abTests.createdAt), desc(byteOrder(store, abTests.id)))
          .limit(query.limit)
          .offset((query.page - 1) * query.limit),
      );
      const total = (await store.first(store.db.select({ n: count() }).from(abTests).where(where)))?.n ?? 0;
      const variants = await variantsOf(tests.map((test) => test.id));
      return {
        items: tests.map((test) => toAbTestResult(test, variants.get(test.id) ?? [])),
        page: query.page,
        limit: query.limit,
        total,
      };
    },

    getAbTest,

    /**
     * Adds impressions and conversions (from the channel's analytics) to a variant of a running test.
     * The variant and its test are locked (PostgreSQL): two reports at once both count, and none
     * lands after the test was completed.
     */
    async recordAbResult(variantId: string, counts: AbResult, options: { actor?: string } = {}): Promise<AbTestResult> {
      const delta = parseOrThrow(abResultSchema, counts);
      return store.transaction(async () => {
        const { abTestVariants } = store.t;
        const variant = await store.first(store.forUpdate(store.db.select().from(abTestVariants).where(eq(abTestVariants.id, variantId))));
        if (!variant) throw new NotFoundError('A/B test variant', variantId);
        const test = await requireTest(variant.abTestId, { lock: true });
        if (test.status !== 'running') throw new ConflictError(`A/B test "${test.id}" is completed; its results are final`);
        const next = { impressions: variant.impressions + delta.impressions, conversions: variant.conversions + delta.conversions };
        if (next.conversions > next.impressions) {
          throw new ValidationError('A variant cannot have more conversions than impressions', [
            { pointer: '/conversions', detail: `would be ${next.conversions}, above ${next.impressions} impressions` },
          ]);
        }
        await store.run(store.db.update(abTestVariants).set(next).where(eq(abTestVariants.id, variantId)));
        if (options.actor) {
          await audit.recordInTransaction({
            actor: options.actor,
            action: 'ab_test.record_result',
            entityType: 'ab_test',
            entityId: test.id,
            before: { variant_id: variantId, impressions: variant.impressions, conversions: variant.conversions },
            after: { variant_id: variantId, ...next },
          });
        }
        return getAbTest(test.id);
      });
    },

    /** Stops a running test; its counts are final from then on. */
    completeAbTest(id: string, actor: string): Promise<AbTestResult> {
      return store.transaction(async () => {
        const test = await requireTest(id, { lock: true });
        if (test.status !== 'running') throw new ConflictError(`A/B test "${id}" is already completed`);
        const completedAt = isoNow(clock);
        const { abTests } = store.t;
        await store.run(store.db.update(abTests).set({ status: 'completed', completedAt }).where(eq(abTests.id, id)));
        const result = await getAbTest(id);
        await audit.recordInTransaction({
          actor,
          action: 'ab_test.complete',
          entityType: 'ab_test',
          entityId: id,
          before: { status: test.status },
          after: { status: 'completed', completed_at: completedAt, winner: result.winner ?? null, p_value: result.p_value ?? null },
        });
        return result;
      });
    },
  };
}
