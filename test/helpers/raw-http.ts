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
    const socket = net.connect(port, '127.0.0.1');
    const finish = recordExchange(socket, waitMs, resolve);
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

/**
 * Keeps what the server sends on `socket`; the returned `finish(closed)` (which `waitMs` calls with false)
 * stops once, destroys the socket and hands the exchange to `done`.
 */
function recordExchange(socket: net.Socket, waitMs: number, done: (exchange: RawExchange) => void): (closed: boolean) => void {
  const started = Date.now();
  const received: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => received.push(chunk));
  let finished = false;
  const finish = (closed: boolean) => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    socket.destroy();
    const data = Buffer.concat(received).toString('latin1');
    const statuses = [...data.matchAll(/HTTP\/1\.[01] (\d{3}) [A-Z]/g)].map((match) => Number(match[1]));
    done({ data, closed, elapsedMs: Date.now() - started, statuses });
  };
  const timer = setTimeout(() => finish(false), waitMs);
  return finish;
}

export function portOf(origin: string): number {
  return Number(new URL(origin).port);
}

export interface UploadExchange extends RawExchange {
  /** Body bytes written before the socket failed or the upload ended. */
  sentBytes: number;
  /** The error a write or read met (EPIPE, ECONNRESET: the server reset the connection), if any. */
  socketError: string | null;
  /** True when the server ended its side cleanly (a FIN, not a reset). */
  serverEnded: boolean;
}

/**
 * Sends `head`, then `bodyBytes` of body in `pieceBytes` pieces `gapMs` apart (chunked-encoded when
 * `chunked`), then `after` (a next request on the same connection), the way a client that uploads
 * without waiting for an answer does; it keeps its side open (half-open) and reads until the server
 * ends or closes the connection, or `waitMs` passes.
 */
export function uploadExchange(
  port: number,
  head: string,
  {
    bodyBytes,
    pieceBytes = 64 * 1024,
    gapMs = 5,
    chunked = false,
    stallAfterBytes = Infinity,
    after = '',
    waitMs = 10_000,
  }: {
    bodyBytes: number;
    pieceBytes?: number;
    gapMs?: number;
    chunked?: boolean;
    /** Stops sending (without closing) once this much body is out. */
    stallAfterBytes?: number;
    after?: string;
    waitMs?: number;
  },
): Promise<UploadExchange> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let sentBytes = 0;
    let socketError: string | null = null;
    let serverEnded = false;
    const finish = recordExchange(socket, waitMs, (exchange) => resolve({ ...exchange, sentBytes, socketError, serverEnded }));
    // Over once the server has said all it will and the upload has gone as far as it goes: a server that
    // half-closes after its answer must still take the rest of the upload without a reset.
    let uploadOver = false;
    const uploadEnded = () => {
      uploadOver = true;
      if (serverEnded) finish(true);
    };
    socket.on('end', () => {
      serverEnded = true;
      if (uploadOver) finish(true);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      socketError ??= error.code ?? error.message;
    });
    socket.on('close', () => finish(true));
    socket.on('connect', async () => {
      socket.write(head);
      while (sentBytes < Math.min(bodyBytes, stallAfterBytes) && !socket.destroyed) {
        const piece = Buffer.alloc(Math.min(pieceBytes, bodyBytes - sentBytes), 'a');
        const framed = chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece;
        // Waits for the kernel to take each piece, so that a reset shows up as an error, not as lost bytes.
        await new Promise<void>((written) => socket.write(framed, () => written()));
        if (socket.destroyed || socketError) return uploadEnded();
        sentBytes += piece.length;
        if (gapMs > 0) await new Promise((wait) => setTimeout(wait, gapMs));
      }
      if (sentBytes === bodyBytes && !socket.destroyed) {
        await new Promise<void>((written) => socket.write((chunked ? '0\r\n\r\n' : '') + after, () => written()));
      }
      uploadEnded();
    });
  });
}
