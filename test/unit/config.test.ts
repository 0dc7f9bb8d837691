import { describe, expect, it } from 'vitest';
import { ConfigError, configFromEnv, createConfig, parseTrustProxy } from '../../src-api/config';

describe('config from the environment', () => {
  it('reads the profile cache size, and keeps the default without it', () => {
    expect(createConfig(configFromEnv({ AGENTDIR_PROFILE_CACHE_ENTRIES: '2000' })).profileCacheEntries).toBe(2000);
    expect(createConfig(configFromEnv({})).profileCacheEntries).toBe(1_100_000);
  });

  it.each(['0', '-5', 'lots', '1.5'])('refuses AGENTDIR_PROFILE_CACHE_ENTRIES=%s with a message naming it', (value) => {
    expect(() => configFromEnv({ AGENTDIR_PROFILE_CACHE_ENTRIES: value })).toThrow(ConfigError);
    expect(() => configFromEnv({ AGENTDIR_PROFILE_CACHE_ENTRIES: value })).toThrow(/AGENTDIR_PROFILE_CACHE_ENTRIES/);
  });
});

describe('metrics access', () => {
  it('is local by default and follows AGENTDIR_METRICS', () => {
    expect(createConfig().metrics).toBe('local');
    expect(createConfig(configFromEnv({ AGENTDIR_METRICS: 'token' })).metrics).toBe('token');
    expect(createConfig(configFromEnv({ AGENTDIR_METRICS: 'OFF' })).metrics).toBe('off');
  });

  it('refuses an unknown mode with a message naming the variable', () => {
    expect(() => configFromEnv({ AGENTDIR_METRICS: 'public' })).toThrow(/AGENTDIR_METRICS must be one of local, token, off/);
  });
});

describe('--trust-proxy and AGENTDIR_TRUST_PROXY', () => {
  it('reads on/off, a number of proxies, or a list of addresses and CIDR ranges', () => {
    expect(parseTrustProxy('on', 'x')).toBe(1);
    expect(parseTrustProxy('off', 'x')).toBe(false);
    expect(parseTrustProxy('0', 'x')).toBe(false);
    expect(parseTrustProxy('2', 'x')).toBe(2);
    expect(parseTrustProxy('10.0.0.0/8, 127.0.0.1,::1,fd00::/8', 'x')).toEqual(['10.0.0.0/8', '127.0.0.1', '::1', 'fd00::/8']);
    expect(configFromEnv({ AGENTDIR_TRUST_PROXY: '3' }).trustProxy).toBe(3);
    for (const bad of ['maybe', '10.0.0.0/33', 'not-an-ip', '1.2.3.4/x']) expect(() => parseTrustProxy(bad, 'x')).toThrow(ConfigError);
  });
});
