import pg from 'pg';
import type { ListenHandlers } from './store';

/** How long after losing its connection the listener tries again. */
const RECONNECT_MS = 1_000;

/**
 * store.listen() on PostgreSQL: one connection of its own (not from the pool: it
 * stays open, and a pooled one could be lent to a transaction), LISTENing on
 * every channel asked for. It connects on the first listen(); when the
 * connection fails or drops (the server restarted, the backend was terminated)
 * every subscriber hears listening(false), and a second later it connects and
 * LISTENs again, then listening(true). TCP keepalive bounds how long a silently
 * broken connection goes unnoticed.
 */
export function pgListener(config: pg.ClientConfig) {
  const subscribers = new Map<string, ListenHandlers[]>();
  let client: pg.Client | undefined;
  let up = false;
  let retry: NodeJS.Timeout | undefined;
  let closed = false;

  const everyone = () => [...subscribers.values()].flat();
  const tell = (on: boolean, handlers = everyone()) => {
    for (const subscriber of handlers) subscriber.listening(on);
  };
  const listenOn = (connection: pg.Client, channel: string) => connection.query(`LISTEN ${pg.escapeIdentifier(channel)}`);

  const lost = (connection: pg.Client) => {
    if (connection !== client) return;
    client = undefined;
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
      const connection = client;
      client = undefined;
      await connection?.end().catch(() => {});
    },
  };
}
