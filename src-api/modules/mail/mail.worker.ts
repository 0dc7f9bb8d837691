import { randomBytes } from 'node:crypto';
import type { MailConfig } from '../../config';
import type { Clock } from '../../lib/clock';
import type { MailService } from './mail.service';
import { createMailTransport, type MailTransport } from './mail.transport';

export interface MailWorkerDeps {
  mail: MailService;
  clock: Clock;
  config: { mail: MailConfig; dataDir: string };
  transport?: MailTransport;
  log?: (message: string, error?: unknown) => void;
}

/** Mails claimed per round; sent one after another (mail volume is small, SMTP servers like few connections). */
const BATCH = 10;

/**
 * Sends the outbox, like the webhook dispatcher: it wakes when this process
 * queues mail, at the next retry's due time, and otherwise every
 * `pollIntervalMs` (to see mail queued by the CLI or another process). Only
 * startServer starts it. Workers of several processes share one outbox: each
 * claims due mails under a lease of its own (mail.claimDue), so a mail goes out
 * once unless its sender stalls past the lease.
 */
export function createMailWorker({ mail, clock, config, transport, log = defaultLog }: MailWorkerDeps) {
  const owner = `mail-${randomBytes(6).toString('hex')}`;
  let sender: MailTransport | undefined = transport;
  let running = false;
  let busy: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let again = false;
  let stopListening: (() => void) | undefined;
  let sent = 0;

  const schedule = (delayMs: number): void => {
    if (!running) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(run, Math.max(0, delayMs));
  };

  const run = (): void => {
    timer = undefined;
    if (!running) return;
    if (busy) {
      again = true; // a round is going on: look once more when it ends
      return;
    }
    busy = round().finally(() => {
      busy = undefined;
      if (again) {
        again = false;
        schedule(0);
      }
    });
  };

  const round = async (): Promise<void> => {
    let delay = config.mail.pollIntervalMs;
    try {
      const rows = await mail.claimDue(owner, BATCH);
      sender ??= createMailTransport({ mail: config.mail, dataDir: config.dataDir, log: (message) => log(message) });
      for (const row of rows) {
        if (!running) break; // the lease runs out and the next start sends it
        try {
          const deliveredTo = await sender.send(row);
          // Recorded only while the lease is ours: if it ran out mid-send, the worker that took the mail over records it.
          await mail.recordSent(row.id, owner, deliveredTo);
          sent++;
        } catch (error) {
          const { willRetry } = await mail.recordFailure(row, owner, error instanceof Error ? error.message : String(error));
          log(`mail: could not send "${row.subject}" to ${row.to} (${willRetry ? 'will retry' : 'giving up'})`, error);
        }
      }
      if (rows.length === BATCH) delay = 0;
      else {
        const next = await mail.nextDueAt();
        if (next) delay = Math.min(delay, Math.max(5, next.getTime() - clock.now().getTime()));
      }
    } catch (error) {
      log('mail: could not read the outbox; trying again later', error);
    }
    schedule(delay);
  };

  return {
    start(): void {
      if (running) return;
      running = true;
      stopListening = mail.onQueued(() => {
        if (!running) return;
        if (busy) again = true;
        else schedule(0);
      });
      schedule(0);
    },

    /** Stops; waits for the mail being sent (bounded by the SMTP timeouts). */
    async stop(): Promise<void> {
      running = false;
      stopListening?.();
      if (timer) clearTimeout(timer);
      timer = undefined;
      await busy;
      sender?.close();
      sender = transport;
    },

    status() {
      return { running, owner, sent };
    },
  };
}

export type MailWorker = ReturnType<typeof createMailWorker>;

function defaultLog(message: string, error?: unknown): void {
  if (error === undefined) console.log(message);
  else console.error(message, error instanceof Error ? error.message : error);
}
