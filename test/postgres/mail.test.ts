import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defaultConfig, type MailConfig } from '../../src-api/config';
import type { Store } from '../../src-api/db/store';
import { createMailService, type MailService } from '../../src-api/modules/mail/mail.service';
import { createMailWorker } from '../../src-api/modules/mail/mail.worker';
import { bothStores } from '../helpers/both-stores';
import { startSmtpReceiver } from '../helpers/smtp-receiver';
import { makeTempDir } from '../helpers/temp-dir';

/**
 * The mail outbox's worker side on the data-access seam, on SQLite and PostgreSQL 15:
 * claiming due mail under leases (FOR UPDATE SKIP LOCKED on PostgreSQL), the
 * sent / retry / failed bookkeeping guarded by the lease, an expired lease taken
 * over, the counts, and two workers with a Store each (two processes) on one
 * database sending every queued mail once to a real SMTP server.
 * test/mail/mail-outbox.test.ts covers the worker inside the server on SQLite.
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

const LEASE_MS = 2 * 60_000;

describe.each(stores.dialects)('the mail worker on $dialect', ({ dialect, open, openAgain }) => {
  let store: Store;
  let other: Store;
  let now = new Date('2025-06-01T09:00:00.000Z');
  let counter = 0;
  const clock = { now: () => now };
  const ids = { next: (prefix: string) => `${prefix}_${String(++counter).padStart(6, '0')}`, agent: () => 'agt_unused' };
  const mailConfig = (fields: Partial<MailConfig> = {}): { mail: MailConfig } => ({
    mail: { ...defaultConfig.mail, retryDelaysMs: [60_000], ...fields },
  });
  const serviceOn = (on: Store, fields: Partial<MailConfig> = {}): MailService =>
    createMailService({ store: on, clock, ids, config: mailConfig(fields) });
  let mail: MailService;

  const queue = (service: MailService, to: string[]) =>
    store.transaction(async () => {
      const queued: string[] = [];
      for (const address of to)
        queued.push(await service.queueInTransaction({ kind: 'test', to: address, subject: `For ${address}`, paragraphs: ['Hi'] }));
      return queued;
    });
  const later = (ms: number) => (now = new Date(now.getTime() + ms));

  beforeAll(async () => {
    store = await open();
    other = await openAgain(store);
    mail = serviceOn(store);
  }, 180_000);

  beforeEach(async () => {
    await store.run(store.db.delete(store.t.mailOutbox));
  });

  it('claims due mail under a lease: each mail goes to one claimer', async () => {
    const queued = await queue(mail, ['a@example.org', 'b@example.org', 'c@example.org']);
    const first = await mail.claimDue('worker-a', 2);
    expect(first).toHaveLength(2);
    expect(first.every((row) => row.status === 'sending' && row.leaseOwner === 'worker-a')).toBe(true);
    const second = await serviceOn(other).claimDue('worker-b', 10);
    expect(second.map((row) => row.leaseOwner)).toEqual(['worker-b']);
    expect([...first, ...second].map((row) => row.id).sort()).toEqual([...queued].sort());
    expect(await mail.claimDue('worker-c', 10)).toEqual([]);
    const stored = await mail.get(second[0]!.id);
    expect(stored).toMatchObject({
      status: 'sending',
      leaseOwner: 'worker-b',
      leaseExpiresAt: new Date(now.getTime() + LEASE_MS).toISOString(),
    });
    expect(await mail.countsByStatus()).toEqual({ pending: 0, sending: 3, sent: 0, failed: 0 });
  });

  it('records sent, retried and failed mail only for the lease holder', async () => {
    const [sentId, failingId] = await queue(mail, ['sent@example.org', 'failing@example.org']);
    const claimed = await mail.claimDue('worker-a', 10);
    const failing = claimed.find((row) => row.id === failingId)!;

    expect(await mail.recordSent(sentId!, 'worker-b', 'smtp: 250 not mine')).toBe(false);
    expect(await mail.recordSent(sentId!, 'worker-a', 'smtp: 250 OK')).toBe(true);
    expect(await mail.get(sentId!)).toMatchObject({
      status: 'sent',
      attemptCount: 1,
      deliveredTo: 'smtp: 250 OK',
      sentAt: now.toISOString(),
      leaseOwner: null,
      leaseExpiresAt: null,
    });

    // The first failure is retried a minute later (±20 %), the second is the last.
    expect(await mail.recordFailure(failing, 'worker-a', 'connect ECONNREFUSED')).toEqual({ willRetry: true });
    const retry = (await mail.get(failingId!))!;
    expect(retry).toMatchObject({ status: 'pending', attemptCount: 1, lastError: 'connect ECONNREFUSED', leaseOwner: null });
    const wait = Date.parse(retry.nextAttemptAt) - now.getTime();
    expect(wait).toBeGreaterThanOrEqual(48_000);
    expect(wait).toBeLessThanOrEqual(72_000);
    expect((await mail.nextDueAt())?.toISOString()).toBe(retry.nextAttemptAt);
    expect(await mail.claimDue('worker-a', 10)).toEqual([]);
    later(72_000);
    const [again] = await mail.claimDue('worker-a', 10);
    expect(again).toMatchObject({ id: failingId, attemptCount: 1 });
    expect(await mail.recordFailure(again!, 'worker-a', 'x'.repeat(600))).toEqual({ willRetry: false });
    expect(await mail.get(failingId!)).toMatchObject({ status: 'failed', attemptCount: 2, lastError: 'x'.repeat(500) });
    expect(await mail.nextDueAt()).toBeUndefined();
    expect(await mail.countsByStatus()).toEqual({ pending: 0, sending: 0, sent: 1, failed: 1 });
  });

  it('takes over a mail whose lease ran out; the stalled sender can no longer record it', async () => {
    const [id] = await queue(mail, ['stalled@example.org']);
    const stalled = serviceOn(store);
    const rescuer = serviceOn(other);
    expect(await stalled.claimDue('worker-stalled', 10)).toHaveLength(1);
    later(LEASE_MS - 1);
    expect(await rescuer.claimDue('worker-rescuer', 10)).toEqual([]);
    later(1);
    const [taken] = await rescuer.claimDue('worker-rescuer', 10);
    expect(taken).toMatchObject({ id, leaseOwner: 'worker-rescuer', leaseExpiresAt: new Date(now.getTime() + LEASE_MS).toISOString() });
    expect(await stalled.recordSent(id!, 'worker-stalled', 'smtp: late')).toBe(false);
    expect(await stalled.recordFailure(taken!, 'worker-stalled', 'late')).toEqual({ willRetry: true });
    expect(await mail.get(id!)).toMatchObject({ status: 'sending', leaseOwner: 'worker-rescuer', attemptCount: 0 });
    expect(await rescuer.recordSent(id!, 'worker-rescuer', 'smtp: 250 OK')).toBe(true);
    expect(await mail.get(id!)).toMatchObject({ status: 'sent', attemptCount: 1, deliveredTo: 'smtp: 250 OK' });
  });

  it.runIf(dialect === 'postgres')('skips the mail another claimer holds locked instead of waiting for it', async () => {
    const [held, free] = await queue(mail, ['held@example.org', 'free@example.org']);
    const { mailOutbox } = store.t;
    const claimed = await store.transaction(async () => {
      // This transaction holds the row lock, as a claim in progress in another process does.
      await store.rows(store.forUpdate(store.db.select().from(mailOutbox).where(eq(mailOutbox.id, held!))));
      return serviceOn(other).claimDue('worker-b', 10);
    });
    expect(claimed.map((row) => row.id)).toEqual([free]);
    expect(await mail.get(held!)).toMatchObject({ status: 'pending', leaseOwner: null });
  });

  it('two workers with a store each send every queued mail once, through a real SMTP server', async () => {
    const smtp = await startSmtpReceiver();
    const dataDir = makeTempDir('agentdir-mail-');
    const config = { mail: { ...mailConfig().mail, smtpUrl: smtp.url, pollIntervalMs: 20 }, dataDir };
    const log = () => {};
    const workers = [
      createMailWorker({ mail: serviceOn(store, config.mail), clock, config, log }),
      createMailWorker({ mail: serviceOn(other, config.mail), clock, config, log }),
    ];
    const addresses = Array.from({ length: 40 }, (_, i) => `reader-${String(i).padStart(2, '0')}@example.org`);
    try {
      await queue(mail, addresses);
      for (const worker of workers) worker.start();
      await expect.poll(async () => (await mail.countsByStatus()).sent, { timeout: 20_000 }).toBe(addresses.length);
      // Another round of polls by both finds nothing left to send.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(smtp.mails.flatMap((received) => received.to).sort()).toEqual(addresses);
      expect(smtp.attempts).toBe(addresses.length);
      const sentBy = workers.map((worker) => worker.status().sent);
      expect(sentBy[0]! + sentBy[1]!).toBe(addresses.length);
      // Both took part: the claims really ran side by side.
      expect(sentBy.every((n) => n > 0)).toBe(true);
    } finally {
      for (const worker of workers) await worker.stop();
      await smtp.close();
    }
  });
});
