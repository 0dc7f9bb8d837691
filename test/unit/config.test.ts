import { describe, expect, it } from 'vitest';
import { ConfigError, configFromEnv, createConfig } from '../../src-api/config';

describe('config from the environment', () => {
  it('reads the profile cache size, and keeps the default without it', () => {
    expect(createConfig(configFromEnv({ AGENTDIR_PROFILE_CACHE_ENTRIES: '2000' })).profileCacheEntries).toBe(2000);
    expect(createConfig(configFromEnv({})).profileCacheEntries).toBe(150_000);
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
