/**
 * Search quality on a judged query set: natural phrasings and other forms of
 * the words in a small hand-written directory (corpus.json), each query with
 * the agents a person would want to see (judged-queries.json).
 *
 *   npm run bench:quality        # prints hit@5 and MRR@5, and the queries that missed
 *
 * hit@5: share of queries with a relevant agent in the top 5. MRR@5: mean of
 * 1 / rank of the first relevant agent in the top 5 (0 when none is).
 * test/unit/search-quality.test.ts holds the floors (0.95 and 0.8).
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { SearchIndex } from '../../src-api/modules/search/search-index';

interface CorpusAgent {
  id: string;
  name: string;
  tagline: string;
  description: string;
  author: string;
  capabilities: string[];
  categories: string[];
  type: string;
}

export interface QualityReport {
  queries: number;
  hitAt5: number;
  mrrAt5: number;
  misses: { query: string; top5: string[] }[];
}

const here = import.meta.dirname;

export function evaluate(): QualityReport {
  const corpus = JSON.parse(fs.readFileSync(path.join(here, 'corpus.json'), 'utf8')) as CorpusAgent[];
  const judged = JSON.parse(fs.readFileSync(path.join(here, 'judged-queries.json'), 'utf8')) as { query: string; relevant: string[] }[];
  const index = new SearchIndex();
  // One trust score for all: ranking must come from the text.
  for (const agent of corpus) index.apply({ ...agent, trustScore: 50, listed: true });
  let hits = 0;
  let reciprocalRanks = 0;
  const misses: QualityReport['misses'] = [];
  for (const { query, relevant } of judged) {
    const top5 = index.search(query, 5).hits.map((hit) => hit.id);
    const rank = top5.findIndex((id) => relevant.includes(id));
    if (rank >= 0) {
      hits++;
      reciprocalRanks += 1 / (rank + 1);
    } else misses.push({ query, top5 });
  }
  return { queries: judged.length, hitAt5: hits / judged.length, mrrAt5: reciprocalRanks / judged.length, misses };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const report = evaluate();
  console.log(`${report.queries} judged queries: hit@5 ${(report.hitAt5 * 100).toFixed(1)} %, MRR@5 ${report.mrrAt5.toFixed(3)}`);
  for (const miss of report.misses) console.log(`  missed: "${miss.query}" → ${miss.top5.join(', ') || '(nothing)'}`);
}
