import net from 'node:net';

export interface RawExchange {
  /** Everything the server sent. */
  data: string;
  /** True when the server closed the socket before `waitMs` passed. */
  closed: boolean;
  /** Time from connect to close (or to giving up). */
  elapsedMs: number;
  /** Status codes of every response in `data`, in order. */
  statuses: number[];
}

/**
 * Writes `chunks` to a fresh TCP connection (each after `gapMs`), then reads until the server closes
 * the socket or `waitMs` passes; a socket still open then counts as held.
 */
export function rawExchange(
  port: number,
  chunks: string | Array<string | Buffer>,
  { waitMs = 5_000, gapMs = 0 }: { waitMs?: number; gapMs?: number } = {},
): Promise<RawExchange> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let finished = false;
    const finish = (closed: boolean) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      const data = Buffer.concat(received).toString('latin1');
      const statuses = [...data.matchAll(/HTTP\/1\.[01] (\d{3}) [A-Z]/g)].map((match) => Number(match[1]));
      resolve({ data, closed, elapsedMs: Date.now() - started, statuses });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.on('connect', async () => {
      for (const [i, chunk] of [chunks].flat().entries()) {
        if (i > 0 && gapMs > 0) await new Promise((wait) => setTimeout(wait, gapMs));
        if (socket.destroyed) return;
        socket.write(chunk);
      }
    });
  });
}

export function portOf(origin: string): number {
  return Number(new URL(origin).port);
}
