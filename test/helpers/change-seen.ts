import { expect, vi } from 'vitest';

/**
 * Waits until a reader's change cursor (`latest`, e.g. agents.latestChangeSeqAsync) reports `seq`
 * or later. Another process's agent write reaches this one on PostgreSQL when its notification
 * arrives, just after the commit (modules/agents/agent-changes.ts); on SQLite from the next
 * event-loop turn. Either way, not within the statement that wrote it.
 */
export async function untilSeen(latest: () => Promise<number>, seq: number): Promise<void> {
  await vi.waitFor(async () => expect(await latest()).toBeGreaterThanOrEqual(seq), { timeout: 10_000, interval: 5 });
}
