import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, configFromEnv, createConfig } from '../../src-api/config';
import { createDnsResolver, DnsError } from '../../src-api/lib/dns-resolver';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';

/** For queries that get an answer: the DNS server shares this process's event loop, which load can stall for a second. */
const ANSWER_DEADLINE_MS = 5000;

let dns: TestDnsServer;
beforeAll(async () => {
  dns = await startDnsServer();
});
afterAll(() => dns.close());

describe('createDnsResolver against a real DNS server on 127.0.0.1', () => {
  it('reads TXT records from the configured server', async () => {
    dns.setTxt('_agent-directory-claim.example.org', ['agent-directory-claim=abc', 'v=spf1 -all']);
    const resolver = createDnsResolver({ servers: [dns.address], timeoutMs: ANSWER_DEADLINE_MS });
    expect(await resolver.resolveTxt('_agent-directory-claim.example.org')).toEqual(['agent-directory-claim=abc', 'v=spf1 -all']);
    expect(dns.queries).toContain('_agent-directory-claim.example.org');
  });

  it('says NXDOMAIN as not_found', async () => {
    const resolver = createDnsResolver({ servers: [dns.address], timeoutMs: ANSWER_DEADLINE_MS });
    const error = await resolver.resolveTxt('missing.example.org').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DnsError);
    expect(error).toMatchObject({ reason: 'not_found' });
  });

  it('gives up on a server that never answers after the deadline, and says so', async () => {
    dns.mode = 'silent';
    try {
      const resolver = createDnsResolver({ servers: [dns.address], timeoutMs: 300 });
      const started = Date.now();
      const error = await resolver.resolveTxt('slow.example.org').catch((e: unknown) => e);
      const elapsed = Date.now() - started;
      expect(error).toMatchObject({ reason: 'timeout' });
      expect((error as Error).message).toMatch(/within 300 ms/);
      expect(elapsed).toBeLessThan(1500);
    } finally {
      dns.mode = 'answer';
    }
  });

  it('says SERVFAIL as a server failure', async () => {
    dns.mode = 'servfail';
    try {
      const resolver = createDnsResolver({ servers: [dns.address], timeoutMs: ANSWER_DEADLINE_MS });
      const error = await resolver.resolveTxt('broken.example.org').catch((e: unknown) => e);
      expect(error).toMatchObject({ reason: 'server' });
      expect((error as Error).message).toMatch(/SERVFAIL/);
    } finally {
      dns.mode = 'answer';
    }
  });
});

describe('DNS and forge config from the environment', () => {
  it('reads AGENTDIR_DNS_SERVERS and AGENTDIR_FORGE_RAW_BASES', () => {
    const config = createConfig(
      configFromEnv({
        AGENTDIR_DNS_SERVERS: '127.0.0.1:5353, [::1]:53,9.9.9.9',
        AGENTDIR_FORGE_RAW_BASES: '{"GitHub.com":"http://127.0.0.1:9000/gh/"}',
      }),
    );
    expect(config.dnsServers).toEqual(['127.0.0.1:5353', '[::1]:53', '9.9.9.9']);
    expect(config.forgeRawBases).toEqual({ 'github.com': 'http://127.0.0.1:9000/gh' });
    expect(createConfig().dnsServers).toEqual([]);
  });

  it.each([
    ['AGENTDIR_DNS_SERVERS', 'dns.example.org'],
    ['AGENTDIR_DNS_SERVERS', '127.0.0.1:99999'],
    ['AGENTDIR_FORGE_RAW_BASES', 'not json'],
    ['AGENTDIR_FORGE_RAW_BASES', '{"github.com":"ftp://x"}'],
  ])('refuses %s=%s with a message naming it', (name, value) => {
    expect(() => configFromEnv({ [name]: value })).toThrow(ConfigError);
    expect(() => configFromEnv({ [name]: value })).toThrow(new RegExp(name));
  });
});
