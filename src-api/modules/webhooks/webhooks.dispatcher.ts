import type { Config } from '../../config';
import type { Clock } from '../../lib/clock';
import { newLeaseOwner, type ClaimedAttempt, type DeliveryQueue } from './webhooks.queue';
import { sendWebhook, type AttemptOutcome, type WebhookSender } from './webhooks.sender';
import type { DeliveryStatus } from './webhooks.table';

export interface WebhookDispatcherDeps {
  queue: DeliveryQueue;
  clock: Clock;
  config: Pick<Config, 'webhooks' | 'allowPrivateUrls'>;
  send?: WebhookSender;
  /** Lease owner id; random per dispatcher unless given. */
  owner?: string;
  log?: (message: string, error?: unknown) => void;
}

export interface DispatcherStatus {
  running: boolean;
  owner: string;
  inFlight: number;
  /** Attempts this dispatcher has sent (any outcome) since it was created. */
  attemptsSent: number;
  /** Times it has looked for due deliveries with a slot free: one per send finished, wake-up or poll, not more. */
  claims: number;
}

/** When nothing was claimable but the database says something is already due (clock skew between processes), don't spin. */
const MIN_IDLE_DELAY_MS = 5;

/**
 * Sends queued deliveries. It claims due deliveries from the shared queue
 * (under its own lease), sends at most `config.webhooks.concurrency` at once,
 * and records each outcome. It wakes at once when this process queues
 * deliveries (the queue's onQueued hook), at the next known due time (a
 * retry), and otherwise every `pollIntervalMs`, which is how it sees
 * deliveries queued by other processes (the CLI) without a restart.
 */
export function createWebhookDispatcher({
  queue,
  clock,
  config,
  send = sendWebhook,
  owner = newLeaseOwner(),
  log = defaultLog,
}: WebhookDispatcherDeps) {
  const settings = config.webhooks;
  const inFlight = new Set<Promise<void>>();
  let running = false;
  let attemptsSent = 0;
  let claims = 0;
  let timer: PendingTick | undefined;
  let timerDueAt = Number.POSITIVE_INFINITY;
  let stopListening: (() => void) | undefined;
  const attemptListeners = new Set<AttemptListener>();

  /** Runs a tick after `delayMs`, unless one is already set to run sooner. 0 means on the next turn of the event loop. */
  const schedule = (delayMs: number): void => {
    if (!running) return;
    const dueAt = Date.now() + delayMs;
    if (timer && timerDueAt <= dueAt) return;
    if (timer) clearTimer(timer);
    timerDueAt = dueAt;
    const run = (): void => {
      timer = undefined;
      timerDueAt = Number.POSITIVE_INFINITY;
      tick();
    };
    // setImmediate, not setTimeout(0): a freed slot is refilled without the timer's 1 ms floor.
    timer = delayMs <= 0 ? { immediate: setImmediate(run) } : { timeout: setTimeout(run, delayMs) };
  };

  /**
   * One claim at a time: a tick asked for while one is claiming (a send finished, a wake-up)
   * runs again once it is done, so no free slot is missed and no two claims overlap.
   */
  let ticking: Promise<void> | undefined;
  let tickAgain = false;
  const tick = (): void => {
    if (!running) return;
    if (ticking) {
      tickAgain = true;
      return;
    }
    ticking = claimAndLaunch().finally(() => {
      ticking = undefined;
      if (tickAgain) {
        tickAgain = false;
        schedule(0);
      }
    });
  };

  const claimAndLaunch = async (): Promise<void> => {
    const free = settings.concurrency - inFlight.size;
    if (free <= 0) return; // every finishing send ticks again
    let claimed: ClaimedAttempt[];
    claims++;
    try {
      claimed = await queue.claimDue(owner, free);
    } catch (error) {
      log('webhooks: could not claim due deliveries; trying again later', error);
      schedule(settings.pollIntervalMs);
      return;
    }
    // Launched even when stop() came meanwhile: they are claimed, and stop() waits for them.
    for (const attempt of claimed) launch(attempt);
    if (!running || claimed.length === free) return; // full: more may be due, the next finished send looks

    let delay = settings.pollIntervalMs;
    try {
      const next = await queue.nextDueAt(owner, free - claimed.length);
      if (next) delay = Math.min(delay, Math.max(MIN_IDLE_DELAY_MS, next.getTime() - clock.now().getTime()));
    } catch (error) {
      log('webhooks: could not read the next due time', error);
    }
    schedule(delay);
  };

  const launch = (attempt: ClaimedAttempt): void => {
    const work = (async () => {
      let outcome: AttemptOutcome;
      try {
        outcome = await send(attempt.request, { timeoutMs: settings.timeoutMs, allowPrivateUrls: config.allowPrivateUrls });
      } catch (error) {
        outcome = { ok: false, statusCode: null, latencyMs: 0, responseExcerpt: null, error: `request failed: ${String(error)}` };
      }
      attemptsSent++;
      try {
        const status = await queue.recordOutcome(attempt, outcome, owner);
        for (const listener of attemptListeners) listener(outcome, status);
      } catch (error) {
        // The lease runs out and the delivery is sent again: at least once, never lost.
        log(`webhooks: could not record attempt ${attempt.attemptNumber} of delivery ${attempt.deliveryId}`, error);
      }
    })();
    inFlight.add(work);
    void work.finally(() => {
      inFlight.delete(work);
      schedule(0);
    });
  };

  const wake = (): void => schedule(0);

  return {
    owner,

    start(): void {
      if (running) return;
      running = true;
      stopListening = queue.onQueued(wake);
      schedule(0);
    },

    /** Calls `listener` after each attempt is recorded (for /metrics); returns the unsubscribe. */
    onAttempt(listener: AttemptListener): () => void {
      attemptListeners.add(listener);
      return () => attemptListeners.delete(listener);
    },

    /** Look for due deliveries now (e.g. after a redelivery from another transport). */
    wake,

    /**
     * Stops claiming, then waits for the sends in flight (each bounded by the
     * send deadline). Whatever does not finish in `waitMs` keeps its lease,
     * which runs out so the next start (of any process) sends it again.
     */
    async stop(waitMs = settings.timeoutMs + 1_000): Promise<void> {
      running = false;
      stopListening?.();
      stopListening = undefined;
      if (timer) clearTimer(timer);
      timer = undefined;
      timerDueAt = Number.POSITIVE_INFINITY;
      await ticking; // a claim under way finishes (and launches what it took)
      if (inFlight.size === 0) return;
      let giveUp: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...inFlight]),
        new Promise<void>((resolve) => {
          giveUp = setTimeout(resolve, waitMs);
        }),
      ]);
      clearTimeout(giveUp);
    },

    status(): DispatcherStatus {
      return { running, owner, inFlight: inFlight.size, attemptsSent, claims };
    },
  };
}

/** What an attempt came to, and the delivery's new status (null: the lease had passed to another process). */
export type AttemptListener = (outcome: AttemptOutcome, status: DeliveryStatus | null) => void;

export type WebhookDispatcher = ReturnType<typeof createWebhookDispatcher>;

type PendingTick = { immediate: NodeJS.Immediate } | { timeout: NodeJS.Timeout };

function clearTimer(pending: PendingTick): void {
  if ('immediate' in pending) clearImmediate(pending.immediate);
  else clearTimeout(pending.timeout);
}

function defaultLog(message: string, error?: unknown): void {
  console.error(message, error ?? '');
}
