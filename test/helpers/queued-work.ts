import type { Store } from '../../src-api/db/store';

/**
 * What the console's overview counts as waiting, written straight into the tables: four submissions
 * (three pending, one of them 45 days old, and one rejected) and three claims of `agentId` (two pending,
 * one verified). `iso(daysAgo)` dates them; ids start with `prefix`.
 */
export async function insertQueuedWork(store: Store, agentId: string, iso: (daysAgo: number) => string, prefix: string): Promise<void> {
  const submission = (n: number, status: 'pending' | 'rejected', daysAgo: number) => ({
    id: `sub_${prefix}${n}`,
    status,
    name: `sub_${prefix}${n}`,
    tagline: 'x',
    sourceUrl: `https://example.com/sub_${prefix}${n}`,
    sourceUrlKey: `example.com/sub_${prefix}${n}`,
    createdAt: iso(daysAgo),
    updatedAt: iso(daysAgo),
  });
  await store.run(
    store.db
      .insert(store.t.submissions)
      .values([submission(1, 'pending', 0), submission(2, 'pending', 3), submission(3, 'rejected', 3), submission(4, 'pending', 45)]),
  );
  await store.run(
    store.db.insert(store.t.claims).values(
      (['pending', 'pending', 'verified'] as const).map((status, i) => ({
        id: `clm_${prefix}${i}`,
        agentId,
        claimantName: 'C',
        claimantEmail: 'c@example.com',
        status,
        token: 't',
        verificationUrl: 'https://example.com/.well-known/agent-directory-claim.txt',
        createdAt: iso(1),
        updatedAt: iso(1),
      })),
    ),
  );
}
