import pg from 'pg';
import type { ListenHandlers } from './store';

/** How long after losing its connection the listener tries again. */
const RECONNECT_MS = 1_000;

/**
 * How often the live connection is asked `SELECT 1`, and how long the answer may take. A
 * connection whose network went silent (no reset, no FIN) answers nothing; TCP keepalive alone
 * would notice it after the OS's defaults (over two hours on Linux), and all that time the
 * cursor would keep an old value. With this, within two intervals.
 */
const HEARTBEAT_MS = 5_000;

export interface PgListenerOptions {
  /** Tests shorten it. */
  heartbeatMs?: number;
}

/**
 * store.listen() on PostgreSQL: one connection of its own (not from the pool: it
 * stays open, and a pooled one could be lent to a transaction), LISTENing on
 * every channel asked for. It connects on the first listen(); when the
 * connection fails or drops (the server restarted, the backend was terminated)
 * every subscriber hears listening(false), and a second later it connects and
 * LISTENs again, then listening(true). A heartbeat (HEARTBEAT_MS) finds a
 * connection that went silent without breaking, and treats it as lost.
 */
export function pgListener(config: pg.ClientConfig, { heartbeatMs = HEARTBEAT_MS }: PgListenerOptions = {}) {
  const subscribers = new Map<string, ListenHandlers[]>();
  let client: pg.Client | undefined;
  let up = false;
  let retry: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let closed = false;

  const everyone = () => [...subscribers.values()].flat();
  const tell = (on: boolean, handlers = everyone()) => {
    for (const subscriber of handlers) subscriber.listening(on);
  };
  const listenOn = (connection: pg.Client, channel: string) => connection.query(`LISTEN ${pg.escapeIdentifier(channel)}`);

  /** Every heartbeatMs, `SELECT 1` on `connection`: no answer within heartbeatMs, and it is lost. */
  const beat = (connection: pg.Client) => {
    let waiting = false;
    heartbeat = setInterval(() => {
      if (waiting) return;
      waiting = true;
      let deadline: NodeJS.Timeout | undefined;
      const silent = new Promise<never>((_, reject) => {
        deadline = setTimeout(() => reject(new Error('no answer to the heartbeat')), heartbeatMs);
      });
      Promise.race([connection.query('SELECT 1'), silent]).then(
        () => {
          clearTimeout(deadline);
          waiting = false;
        },
        () => {
          clearTimeout(deadline);
          lost(connection);
        },
      );
    }, heartbeatMs);
    heartbeat.unref();
  };

  const lost = (connection: pg.Client) => {
    if (connection !== client) return;
    client = undefined;
    clearInterval(heartbeat);
    connection.end().catch(() => {});
    if (up) {
      up = false;
      tell(false);
    }
    if (!closed) {
      retry = setTimeout(connect, RECONNECT_MS);
      retry.unref();
    }
  };

  const connect = () => {
    retry = undefined;
    const connection = new pg.Client({ ...config, keepAlive: true });
    client = connection;
    connection.on('notification', ({ channel, payload }) => {
      for (const subscriber of subscribers.get(channel) ?? []) subscriber.notified(payload ?? '');
    });
    connection.on('error', () => lost(connection));
    connection.on('end', () => lost(connection));
    void (async () => {
      try {
        await connection.connect();
        for (const channel of subscribers.keys()) await listenOn(connection, channel);
        if (connection !== client) return;
        up = true;
        beat(connection);
        tell(true);
      } catch {
        lost(connection);
      }
    })();
  };

  return {
    listen(channel: string, handlers: ListenHandlers): void {
      if (closed) throw new Error('the store is closed');
      const known = subscribers.get(channel);
      subscribers.set(channel, [...(known ?? []), handlers]);
      if (!client && !retry) return connect();
      if (!up || known) {
        if (up) handlers.listening(true);
        return;
      }
      // A new channel on a live connection: heard from once its LISTEN has run.
      const connection = client;
      if (!connection) return;
      listenOn(connection, channel).then(
        () => connection === client && handlers.listening(true),
        () => lost(connection),
      );
    },
    async close(): Promise<void> {
      closed = true;
      if (retry) clearTimeout(retry);
      clearInterval(heartbeat);
      const connection = client;
      client = undefined;
      await connection?.end().catch(() => {});
    },
  };
}
