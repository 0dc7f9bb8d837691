import net from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pgListener } from '../../src-api/db/pg-listener';
import { eventually } from '../helpers/webhook-receiver';
import { startPostgres, type TestPostgres } from '../helpers/postgres-server';

/**
 * The store's listening connection (db/pg-listener.ts) when its network goes silent: no reset,
 * no FIN, nothing answers (a cable pulled, a firewall dropping packets). A TCP proxy in between
 * stops forwarding. The heartbeat finds it within two intervals, the subscribers hear
 * listening(false) (the change cursor then reads on every turn again), and once the network is
 * back it reconnects and notifications arrive again.
 */
let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

/** A TCP proxy to PostgreSQL that can be made to drop everything, both ways, keeping its sockets open. */
async function silenceableProxy(port: number) {
  let silent = false;
  const sockets = new Set<net.Socket>();
  const proxy = net.createServer((inbound) => {
    const outbound = net.connect(port, '127.0.0.1');
    for (const [from, to] of [
      [inbound, outbound],
      [outbound, inbound],
    ] as const) {
      sockets.add(from);
      from.on('data', (chunk) => silent || to.write(chunk));
      from.on('error', () => to.destroy());
      from.on('close', () => {
        sockets.delete(from);
        to.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    port: (proxy.address() as net.AddressInfo).port,
    silence: () => (silent = true),
    /** The network is back: the connections it silenced are gone (as their peers timed out), new ones work. */
    restore() {
      silent = false;
      for (const socket of sockets) socket.destroy();
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => proxy.close(resolve));
    },
  };
}

it('a listening connection that goes silent is found by the heartbeat, and listens again once the network is back', async () => {
  const proxy = await silenceableProxy(server.port);
  const listener = pgListener(
    { connectionString: `postgres://postgres@127.0.0.1:${proxy.port}/postgres`, connectionTimeoutMillis: 500 },
    { heartbeatMs: 1_000 }, // long enough that a loaded machine's slow answer is no loss
  );
  const heard: string[] = [];
  const states: boolean[] = [];
  listener.listen('agentdir_test_channel', { notified: (payload) => heard.push(payload), listening: (on) => states.push(on) });
  const notify = async (payload: string) => {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    await client.query(`SELECT pg_notify('agentdir_test_channel', $1)`, [payload]);
    await client.end();
  };
  try {
    await eventually(async () => (states.at(-1) === true ? true : undefined), 'listening');
    await notify('first');
    await eventually(async () => (heard.includes('first') ? true : undefined), 'the first notification');

    proxy.silence();
    // Without the heartbeat nothing is said for hours (TCP keepalive's defaults): this waits 10 s at most (fails so).
    await eventually(async () => (states.at(-1) === false ? true : undefined), 'the silent connection noticed', 10_000);
    await notify('unheard');

    proxy.restore();
    await eventually(async () => (states.at(-1) === true ? true : undefined), 'listening again', 10_000);
    await notify('second');
    await eventually(async () => (heard.includes('second') ? true : undefined), 'a notification after the reconnect');
    expect(heard).toEqual(['first', 'second']);
  } finally {
    await listener.close();
    await proxy.close();
  }
}, 60_000);
