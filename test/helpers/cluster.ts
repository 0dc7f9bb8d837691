import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './redis-server';
import { makeTempDir } from './test-server';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** scripts/cluster.sh as the README runs it: Redis, PostgreSQL, `serve` replicas on one database, nginx in front. */
export interface TestCluster {
  /** nginx: `http://127.0.0.1:<port>`, the one address clients use. */
  origin: string;
  /** `<origin>/api/v1`. */
  api: string;
  /** Each replica's own origin (reachable directly from this machine, as nginx reaches it). */
  replicas: { origin: string; api: string; pid: number }[];
  redisUrl: string;
  /** nginx's master process and redis-server (undefined when the cluster uses a Redis of its own). */
  nginxPid: number;
  redisPid: number | undefined;
  /** The PostgreSQL the script started and its database (undefined with CLUSTER_STORE=sqlite or CLUSTER_DATABASE_URL). */
  postgresPid: number | undefined;
  databaseUrl: string | undefined;
  adminToken: string;
  /** The directory of the logs, pids and nginx config. */
  dir: string;
  /** The script's output so far. */
  output(): string;
  /** nginx's access log, one entry per request: client, request line, status, replica that answered. */
  accessLog(): AccessLogEntry[];
  /**
   * The entries that pass `filter`, once there are `count` of them: nginx writes a request's line
   * just after its answer, so the last ones may lag behind what the client has seen.
   */
  waitForAccessLog(filter: (entry: AccessLogEntry) => boolean, count: number, timeoutMs?: number): Promise<AccessLogEntry[]>;
  /** SIGINT to the script's process group, as a terminal's Ctrl-C; resolved once the script has exited. */
  interrupt(): Promise<void>;
  /** SIGTERM to the script, resolved once it has stopped everything and exited; then removes its directory. */
  stop(): Promise<void>;
}

export interface AccessLogEntry {
  client: string;
  method: string;
  path: string;
  status: number;
  /** `127.0.0.1:<port>` of the replica(s) tried, as nginx logs `$upstream_addr` ("a, b" after a retry). */
  upstream: string;
  xff: string;
}

const ACCESS_LINE = /^(\S+) "(\S+) (\S+) [^"]*" (\d+) upstream=(.*?) upstream_status=.*? xff="([^"]*)"/;

/**
 * Runs `bash scripts/cluster.sh` on free ports in a temp dir (replicas from the sources) and
 * resolves once it says "cluster: ready"; rejects with its output if it exits first or takes
 * longer than `timeoutMs`.
 */
export async function startCluster(
  options: { replicas?: number; serveArgs?: string[]; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<TestCluster> {
  const { replicas = 2, serveArgs = [], env = {}, timeoutMs = 240_000 } = options;
  const dir = makeTempDir('agentdir-cluster-');
  const [port, redisPort, postgresPort, ...servePorts] = await Promise.all(Array.from({ length: 3 + replicas }, () => freePort()));
  const adminToken = 'cluster-test-admin-token-0123456789';
  const child: ChildProcess = spawn('bash', [path.join(ROOT, 'scripts/cluster.sh')], {
    cwd: ROOT,
    env: {
      ...process.env,
      CLUSTER_DIR: dir,
      CLUSTER_PORT: String(port),
      CLUSTER_REDIS_PORT: String(redisPort),
      CLUSTER_POSTGRES_PORT: String(postgresPort),
      // As the tests' other PostgreSQL servers (test/helpers/postgres-server.ts): nothing to keep if the machine stops.
      CLUSTER_POSTGRES_OPTIONS: '-c fsync=off',
      CLUSTER_SERVE_PORTS: servePorts.join(' '),
      CLUSTER_SERVE_ARGS: serveArgs.join(' '),
      CLUSTER_SERVE_FROM: 'sources',
      CLUSTER_START_TIMEOUT: String(Math.floor(timeoutMs / 1000) - 10),
      AGENTDIR_ADMIN_TOKEN: adminToken,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, as a shell in a terminal gives it: interrupt() signals that group.
    detached: true,
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const running = () => child.exitCode === null && child.signalCode === null;
  const stop = async (): Promise<void> => {
    if (running()) child.kill('SIGTERM');
    await exited;
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const interrupt = async (): Promise<void> => {
    if (running()) process.kill(-child.pid!, 'SIGINT');
    await exited;
  };

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop().then(() => reject(new Error(`cluster.sh was not ready within ${timeoutMs} ms:\n${output}`)));
    }, timeoutMs);
    const poll = setInterval(() => {
      if (output.includes('cluster: ready')) {
        clearTimeout(timer);
        clearInterval(poll);
        resolve();
      }
    }, 50);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      clearInterval(poll);
      reject(new Error(`cluster.sh exited (${code ?? signal}) before it was ready:\n${output}`));
    });
  });

  const envFile = Object.fromEntries(
    fs
      .readFileSync(path.join(dir, 'cluster.env'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => {
        const at = line.indexOf('=');
        return [line.slice(0, at), line.slice(at + 1).replace(/^"|"$/g, '')];
      }),
  ) as Record<string, string>;
  const pids = envFile.CLUSTER_SERVE_PIDS!.split(' ').map(Number);
  const accessLog = (): AccessLogEntry[] =>
    fs
      .readFileSync(path.join(dir, 'nginx/access.log'), 'utf8')
      .split('\n')
      .flatMap((line) => {
        const match = ACCESS_LINE.exec(line);
        if (!match) return [];
        const [, client, method, requestPath, status, upstream, xff] = match;
        return [{ client: client!, method: method!, path: requestPath!, status: Number(status), upstream: upstream!, xff: xff! }];
      });
  return {
    origin: envFile.CLUSTER_URL!,
    api: envFile.CLUSTER_API!,
    replicas: envFile.CLUSTER_SERVE_URLS!.split(' ').map((origin, i) => ({ origin, api: `${origin}/api/v1`, pid: pids[i]! })),
    redisUrl: envFile.CLUSTER_REDIS_URL!,
    nginxPid: Number(envFile.CLUSTER_NGINX_PID),
    redisPid: envFile.CLUSTER_REDIS_PID ? Number(envFile.CLUSTER_REDIS_PID) : undefined,
    postgresPid: envFile.CLUSTER_POSTGRES_PID ? Number(envFile.CLUSTER_POSTGRES_PID) : undefined,
    databaseUrl: envFile.CLUSTER_DATABASE_URL,
    adminToken,
    dir,
    output: () => output,
    accessLog,
    interrupt,
    async waitForAccessLog(filter, count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const entries = accessLog().filter(filter);
        if (entries.length >= count) return entries;
        if (Date.now() > deadline)
          throw new Error(`nginx logged ${entries.length} of the ${count} requests expected within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    stop,
  };
}

export interface PlainResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json<T = unknown>(): T;
}

/**
 * One HTTP request from a chosen local address (any 127.0.0.0/8 address is this machine's
 * loopback): how a test plays clients with different IPs. A new connection each time.
 */
export function requestFrom(
  localAddress: string,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<PlainResponse> {
  const body = init.body === undefined ? undefined : JSON.stringify(init.body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: init.method ?? (body === undefined ? 'GET' : 'POST'),
        localAddress,
        agent: false,
        headers: { ...(body !== undefined && { 'content-type': 'application/json' }), ...init.headers },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, json: <T>() => JSON.parse(text) as T });
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
