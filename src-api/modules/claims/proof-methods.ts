import { isIP } from 'node:net';
import { DnsError, type DnsResolver } from '../../lib/dns-resolver';
import { SafeRequestError, type SafeFetch } from '../../lib/safe-fetch';
import { WELL_KNOWN_CLAIM_PATH } from './claims.schemas';
import type { ProofMethod, ProofResult } from './claims.table';

/**
 * Which proofs of control fit an agent's source, and how each is checked.
 *
 * - `repository-file`: sources on a code forge (GitHub, GitLab, Codeberg). The
 *   owner commits `.well-known/agent-directory-claim.txt` to the default
 *   branch; we read it from the forge's raw-file URL. A file on the forge's
 *   own host (github.com/.well-known/…) is never asked for: no owner can
 *   publish one there.
 * - `dns-txt`: any other named host: a TXT record at
 *   `_agent-directory-claim.<host>`.
 * - `well-known`: any host that is not a forge: the file of contract section 4.
 */

export const DNS_TXT_PREFIX = '_agent-directory-claim.';
export const DNS_TXT_VALUE_PREFIX = 'agent-directory-claim=';
const REPO_FILE = WELL_KNOWN_CLAIM_PATH.slice(1); // .well-known/agent-directory-claim.txt

interface Forge {
  /** The real raw-file origin; `AGENTDIR_FORGE_RAW_BASES` replaces it (tests). */
  rawOrigin: string;
  /** The repository's path on the forge (`owner/repo`, GitLab groups nested), from the source URL's path segments. */
  repoPath(segments: string[]): string | undefined;
  /** Path of the proof file under the raw origin, for the default branch. */
  filePath(repo: string): string;
}

const ownerAndRepo = (segments: string[]): string | undefined =>
  segments.length >= 2 ? `${segments[0]}/${segments[1]!.replace(/\.git$/, '')}` : undefined;

export const FORGES: Record<string, Forge> = {
  'github.com': {
    rawOrigin: 'https://raw.githubusercontent.com',
    repoPath: ownerAndRepo,
    filePath: (repo) => `/${repo}/HEAD/${REPO_FILE}`,
  },
  'gitlab.com': {
    rawOrigin: 'https://gitlab.com',
    // Groups nest (group/sub/project); GitLab's own routes start at "/-/".
    repoPath: (segments) => {
      const end = segments.indexOf('-');
      const path = (end === -1 ? segments : segments.slice(0, end)).map((s) => s.replace(/\.git$/, ''));
      return path.length >= 2 ? path.join('/') : undefined;
    },
    filePath: (repo) => `/${repo}/-/raw/HEAD/${REPO_FILE}`,
  },
  'codeberg.org': {
    rawOrigin: 'https://codeberg.org',
    // Forgejo's web raw route needs a branch name ("raw/branch/<name>"); its API's raw route
    // reads the default branch when no ref is given.
    repoPath: ownerAndRepo,
    filePath: (repo) => `/api/v1/repos/${repo}/raw/${REPO_FILE}`,
  },
};

const forgeHost = (hostname: string): string => hostname.toLowerCase().replace(/^www\./, '');

/** Whether the source lives on a code forge (whose own host can never carry a proof file). */
export function isForgeSource(sourceUrl: string): boolean {
  return forgeHost(new URL(sourceUrl).hostname) in FORGES;
}

/**
 * Every proof that fits `sourceUrl`, the preferred one first: the repository
 * file for forge sources; the well-known file, then a DNS TXT record, for
 * other hosts (no TXT record for an IP address). Empty for a forge URL that
 * names no repository.
 */
export function proofMethodsFor(sourceUrl: string, token: string, rawBases: Record<string, string> = {}): ProofMethod[] {
  const url = new URL(sourceUrl);
  const host = forgeHost(url.hostname);
  const forge = FORGES[host];
  if (forge) {
    const segments = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const repo = forge.repoPath(segments);
    if (!repo) return [];
    const encoded = repo
      .split('/')
      .map((part) => encodeURIComponent(part))
      .join('/');
    const base = rawBases[host] ?? forge.rawOrigin;
    return [{ method: 'repository-file', url: `${base}${forge.filePath(encoded)}` }];
  }
  const methods: ProofMethod[] = [{ method: 'well-known', url: `${url.origin}${WELL_KNOWN_CLAIM_PATH}` }];
  const bare = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(bare) === 0) {
    methods.push({ method: 'dns-txt', name: `${DNS_TXT_PREFIX}${url.hostname.toLowerCase()}`, value: `${DNS_TXT_VALUE_PREFIX}${token}` });
  }
  return methods;
}

/** What a claimant is asked to do for one method, in one sentence. */
export function instructionFor(method: ProofMethod, token: string): string {
  switch (method.method) {
    case 'repository-file':
      return `Commit a file .well-known/agent-directory-claim.txt containing ${token} to the repository's default branch (it is read from ${method.url}).`;
    case 'well-known':
      return `Serve a file at ${method.url} whose body contains ${token} (HTTP 200, no redirect).`;
    case 'dns-txt':
      return `Add a DNS TXT record at ${method.name} with the value ${method.value}.`;
  }
}

export interface ProofCheckerDeps {
  resolver: DnsResolver;
  /** Fetches the proof files (services.safeFetch: public addresses only, capped in flight). */
  fetch: SafeFetch;
  /** Deadline of one file fetch, the wait for a fetch slot included. */
  timeoutMs: number;
  /** Largest proof file read; a larger one fails as too large. */
  maxBytes: number;
}

export type ProofChecker = (method: ProofMethod, token: string) => Promise<ProofResult>;

/** Checks one proof; never throws for what the target does, and says exactly what failed. */
export function createProofChecker({ resolver, fetch, timeoutMs, maxBytes }: ProofCheckerDeps): ProofChecker {
  const checkFile = async (method: ProofMethod, token: string): Promise<ProofResult> => {
    const url = method.url!;
    const base = { method: method.method };
    try {
      const response = await fetch({
        url,
        timeoutMs,
        maxResponseBytes: maxBytes,
        headers: { accept: 'text/plain, */*;q=0.5' },
      });
      const { status } = response;
      if (status >= 300 && status < 400) {
        const location = typeof response.headers.location === 'string' ? ` to ${clip(response.headers.location, 200)}` : '';
        return {
          ...base,
          ok: false,
          status,
          failure: 'redirect',
          detail: `${url} answered HTTP ${status}, a redirect${location}; redirects are refused: the file must be served at this exact URL.`,
        };
      }
      if (status < 200 || status >= 300) {
        const what = status === 404 ? ' (no such file)' : '';
        return {
          ...base,
          ok: false,
          status,
          failure: 'http_status',
          detail: `${url} answered HTTP ${status}${what}; expected HTTP 200 with the token in the body.`,
        };
      }
      if (response.truncated) {
        return {
          ...base,
          ok: false,
          status,
          failure: 'too_large',
          detail: `${url} is too large: more than ${formatBytes(maxBytes)} (reading stopped there); the file should hold just the token.`,
        };
      }
      if (!response.body.includes(token)) {
        return {
          ...base,
          ok: false,
          status,
          failure: 'token_missing',
          detail: `${url} answered HTTP ${status}, but the token of this claim is missing from the file (${formatBytes(response.bytes)} read).`,
        };
      }
      return { ...base, ok: true, status, detail: `The token was found at ${url} (HTTP ${status}).` };
    } catch (error) {
      if (!(error instanceof SafeRequestError)) throw error;
      if (error.reason === 'timeout') {
        return { ...base, ok: false, failure: 'timeout', detail: `${url} did not answer completely within ${formatMs(timeoutMs)}.` };
      }
      if (error.reason === 'private_address') {
        return {
          ...base,
          ok: false,
          failure: 'refused',
          detail: `${url} was not fetched: ${error.message}. Only public addresses are checked.`,
        };
      }
      const dns = /could not resolve the host name/.test(error.message);
      return {
        ...base,
        ok: false,
        failure: dns ? 'dns_error' : 'connection',
        detail: `${url} could not be fetched: ${error.message}${dns ? ' (DNS error)' : ''}.`,
      };
    }
  };

  const checkTxt = async (method: ProofMethod): Promise<ProofResult> => {
    const name = method.name!;
    const expected = method.value!;
    const base = { method: method.method };
    try {
      const records = await resolver.resolveTxt(name);
      if (records.some((record) => record.trim() === expected)) {
        return { ...base, ok: true, detail: `The TXT record ${expected} was found at ${name}.` };
      }
      const ours = records.filter((record) => record.trim().startsWith(DNS_TXT_VALUE_PREFIX)).length;
      const found =
        ours > 0 ? `${ours} agent-directory-claim record(s) with another token` : `${records.length} TXT record(s), none of ours`;
      return {
        ...base,
        ok: false,
        failure: 'token_missing',
        detail: `${name} has ${found}; the token of this claim is missing: add a TXT record with the value ${expected}.`,
      };
    } catch (error) {
      if (!(error instanceof DnsError)) throw error;
      if (error.reason === 'timeout') return { ...base, ok: false, failure: 'dns_timeout', detail: `DNS timeout: ${error.message}.` };
      if (error.reason === 'not_found') {
        return { ...base, ok: false, failure: 'dns_no_record', detail: `No TXT record at ${name}: ${error.message}.` };
      }
      return { ...base, ok: false, failure: 'dns_error', detail: `DNS error: ${error.message}.` };
    }
  };

  return (method, token) => (method.method === 'dns-txt' ? checkTxt(method) : checkFile(method, token));
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

function formatMs(ms: number): string {
  return ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
