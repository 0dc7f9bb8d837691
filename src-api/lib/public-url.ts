import { publicUrlOf, type Config } from '../config';

/**
 * The base of links in mails. Configured (--public-url), or the address the
 * server listens on, which is known only once it listens (port 0 in tests):
 * startServer tells it the port.
 */
export function createPublicUrl(config: Pick<Config, 'publicUrl' | 'host' | 'port'>) {
  let base = publicUrlOf(config);
  return {
    get: (): string => base,
    /** Links to a path under the public URL, e.g. link('/dashboard/verify-email', { token }). */
    link(pathname: string, query: Record<string, string> = {}): string {
      const search = new URLSearchParams(query).toString();
      return `${base}${pathname}${search ? `?${search}` : ''}`;
    },
    /** Whether cookies must be Secure: the public URL is https. */
    isHttps: (): boolean => base.startsWith('https://'),
    listeningOn(port: number): void {
      base = publicUrlOf(config, port);
    },
  };
}

export type PublicUrl = ReturnType<typeof createPublicUrl>;
