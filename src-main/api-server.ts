import net from 'node:net';
import { configFromEnv, createConfig } from '../src-api/config';
import { startServer, type RunningServer } from '../src-api/server';

export const DEFAULT_DESKTOP_PORT = 8787;

/**
 * The REST API, served in-process by the desktop app on AGENTDIR_PORT (else
 * 8787) or, when that port is taken, on a free one: a second copy of the API
 * already running must not stop the app from starting. The console itself
 * does not use it (it talks over IPC), so no /trpc and no /console here.
 */
export async function startDesktopApi({
  dataDir,
  migrationsFolder,
  env = process.env,
}: {
  dataDir: string;
  migrationsFolder: string;
  env?: NodeJS.ProcessEnv;
}): Promise<RunningServer> {
  const fromEnv = configFromEnv(env);
  const host = fromEnv.host ?? '127.0.0.1';
  const port = await availablePort(host, fromEnv.port ?? DEFAULT_DESKTOP_PORT);
  return startServer(createConfig({ ...fromEnv, host, port, dataDir }), { migrationsFolder });
}

/** `preferred` when it can be listened on, else a port the OS picks. */
export async function availablePort(host: string, preferred: number): Promise<number> {
  if (preferred === 0) return 0;
  try {
    await listenOnce(host, preferred);
    return preferred;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' && (error as NodeJS.ErrnoException).code !== 'EACCES') throw error;
    return listenOnce(host, 0);
  }
}

function listenOnce(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen({ host, port, exclusive: true }, () => {
      const address = probe.address();
      const bound = typeof address === 'object' && address ? address.port : port;
      probe.close(() => resolve(bound));
    });
  });
}
