import { describe, expect, it } from 'vitest';
import { pageLinks, pageLinksViaUrl } from '../../src-api/http/pagination';

describe('page links', () => {
  const urls = [
    '/api/v1/agents/search',
    '/api/v1/agents/search?q=kazumor&limit=20',
    '/api/v1/agents/search?q=code+review&page=3&limit=5&type=tool',
    '/api/v1/agents/search?q=caf%C3%A9%20bot&capabilities=a,b&capabilities=c',
    '/api/v1/agents/search?q=%zz&q=&=x&&page=abc',
    '/api/v1/agents/search/?q=a?b/c@d$e!f(g)h*i~j;k:l',
    '/api/v1/agents?sort=name&order=asc',
    // Unusual forms: `new URL` rewrites them, and so must the links.
    '/api/v1/agents/../agents/search?q=x',
    '/api/v1/agents/search?q=a b"c<d>',
    "/api/v1/agents/search?q=it's",
    '/api/v1/agents/search?q=x#frag',
    '/api/v1/agents/search?q=naïve',
    '//evil.example/agents?q=x',
    '/api/v1/agents/%7Efoo?q=x',
  ];
  const pages = [
    { page: 1, limit: 20, total: 0 },
    { page: 1, limit: 20, total: 20 },
    { page: 1, limit: 20, total: 21 },
    { page: 2, limit: 20, total: 100 },
    { page: 9, limit: 20, total: 100 },
  ];

  it('are the same whether the URL is split by hand or parsed by new URL, with and without a replacement query', () => {
    const post = new URLSearchParams({ q: 'two words', type: 'tool', min_trust: '5', capabilities: 'a,b' });
    for (const url of urls) {
      for (const page of pages) {
        expect(pageLinks(url, page), `${url} ${JSON.stringify(page)}`).toBe(pageLinksViaUrl(url, page));
        expect(pageLinks(url, page, post), `${url} ${JSON.stringify(page)} POST`).toBe(pageLinksViaUrl(url, page, post));
      }
    }
  });

  it('point at the next and previous pages, keeping the other parameters', () => {
    expect(pageLinks('/api/v1/agents/search?q=agent&limit=20', { page: 2, limit: 20, total: 100 })).toBe(
      '</api/v1/agents/search?q=agent&limit=20&page=3>; rel="next", </api/v1/agents/search?q=agent&limit=20&page=1>; rel="prev"',
    );
    expect(pageLinks('/api/v1/agents/search?q=agent', { page: 1, limit: 20, total: 5 })).toBeUndefined();
  });
});
