import { describe, expect, it } from 'vitest';
import { corsPolicyFor } from '../../src-api/http/transport';

describe('corsPolicyFor', () => {
  const policy = (url: string) => {
    const found = corsPolicyFor(url, '/api/v1');
    return found ? found.methods : 'none';
  };

  it('lets any origin read the public API, and POST only to search', () => {
    for (const url of ['/api/v1', '/api/v1/', '/api/v1?x=1', '/api/v1/agents', '/api/v1/agents/abc/reviews', '/api/v1/agents/search/x'])
      expect(policy(url), url).toBe('GET, HEAD');
    for (const url of ['/api/v1/agents/search', '/api/v1/agents/search/', '/api/v1/agents/search//?q=a/b', '/api/v1/agents/search?q=x'])
      expect(policy(url), url).toBe('GET, HEAD, POST');
  });

  it('answers the account paths and everything outside the API with nothing', () => {
    for (const url of ['/api/v1/me', '/api/v1/me/', '/api/v1/me?x', '/api/v1/me/keys', '/api/v1/accounts', '/api/v1/sessions/current'])
      expect(policy(url), url).toBe('none');
    for (const url of ['/', '/trpc/stats.overview', '/api/v10/agents', '/api/v', '/metrics', '/console/api/v1'])
      expect(policy(url), url).toBe('none');
  });

  it('compares whole path segments, whatever follows them in the query', () => {
    for (const url of ['/api/v1/mex', '/api/v1/meta/x', '/api/v1/m?e', '/api/v1/?/me', '/api/v1/sessionsx', '/api/v1/x/me'])
      expect(policy(url), url).toBe('GET, HEAD');
    for (const url of ['/api/v1/agents/searchx', '/api/v1/agents/searc?h', '/api/v1/agents?/agents/search'])
      expect(policy(url), url).toBe('GET, HEAD');
  });
});
