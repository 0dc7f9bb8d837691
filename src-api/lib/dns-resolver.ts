import { Resolver } from 'node:dns/promises';
import type { Config } from '../config';

/**
 * The one way the service asks DNS itself (claim TXT records, and any lookup
 * that must be cancellable). A `node:dns` Resolver talks to the servers
 * directly through c-ares: unlike `dns.lookup` it does not occupy a libuv
 * thread, it can be cancelled, and it can be pointed at other servers
 * (`AGENTDIR_DNS_SERVERS`, e.g. a local test server on 127.0.0.1:5353).
 * Every query also has a hard deadline of our own, so a server that never
 * answers costs `timeoutMs` and no more.
 */
export type DnsFailure =
  /** No answer before the deadline. */
  | 'timeout'
  /** The name does not exist, or has no record of that type. */
  | 'not_found'
  /** The server refused or failed (SERVFAIL, REFUSED, a bad answer, no server reachable). */
  | 'server';

export class DnsError extends Error {
  override name = 'DnsError';
  constructor(
    readonly reason: DnsFailure,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

export interface DnsResolver {
  /** TXT records of `name`, each joined from its strings; rejects with DnsError. */
  resolveTxt(name: string): Promise<string[]>;
  /** Addresses of `name` (A, then AAAA); rejects with DnsError. */
  resolveAddresses(name: string): Promise<string[]>;
}

export interface DnsResolverOptions {
  /** `ip` or `ip:port` (`[v6]:port`); empty: the system's servers. */
  servers: readonly string[];
  timeoutMs: number;
}

export function dnsResolverOptions(config: Pick<Config, 'dnsServers' | 'dnsTimeoutMs'>): DnsResolverOptions {
  return { servers: config.dnsServers, timeoutMs: config.dnsTimeoutMs };
}

export function createDnsResolver({ servers, timeoutMs }: DnsResolverOptions): DnsResolver {
  const makeResolver = (): Resolver => {
    // One try per server, each with the whole deadline; our own timer below is the real bound.
    const resolver = new Resolver({ timeout: timeoutMs, tries: 1 });
    if (servers.length > 0) resolver.setServers([...servers]);
    return resolver;
  };

  const query = async <T>(name: string, ask: (resolver: Resolver) => Promise<T>): Promise<T> => {
    // A resolver per query: cancel() aborts every query of a resolver, not just one.
    const resolver = makeResolver();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        resolver.cancel();
        reject(new DnsError('timeout', `no answer from the DNS server for ${name} within ${formatMs(timeoutMs)}`, 'ETIMEOUT'));
      }, timeoutMs);
    });
    try {
      return await Promise.race([ask(resolver), deadline]);
    } catch (error) {
      throw classify(error, name, timeoutMs);
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    resolveTxt: (name) => query(name, async (resolver) => (await resolver.resolveTxt(name)).map((parts) => parts.join(''))),
    resolveAddresses: (name) =>
      query(name, async (resolver) => {
        const [v4, v6] = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]);
        const addresses = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
        if (addresses.length > 0) return addresses;
        throw v4.status === 'rejected' ? v4.reason : new DnsError('not_found', `${name} has no address`, 'ENODATA');
      }),
  };
}

function classify(error: unknown, name: string, timeoutMs: number): DnsError {
  if (error instanceof DnsError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  switch (code) {
    case 'ETIMEOUT':
    case 'ECANCELLED':
      return new DnsError('timeout', `no answer from the DNS server for ${name} within ${formatMs(timeoutMs)}`, code);
    case 'ENOTFOUND':
      return new DnsError('not_found', `${name} does not exist (NXDOMAIN)`, code);
    case 'ENODATA':
      return new DnsError('not_found', `${name} has no record of this type`, code);
    case 'ESERVFAIL':
      return new DnsError('server', `the DNS server failed to answer for ${name} (SERVFAIL)`, code);
    case 'EREFUSED':
      return new DnsError('server', `the DNS server refused the query for ${name} (REFUSED)`, code);
    case 'ECONNREFUSED':
      return new DnsError('server', `the DNS server could not be reached for ${name} (connection refused)`, code);
    default:
      return new DnsError(
        'server',
        `the DNS query for ${name} failed (${typeof code === 'string' ? code : String(error)})`,
        typeof code === 'string' ? code : undefined,
      );
  }
}

function formatMs(ms: number): string {
  return ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
