import { describe, expect, it } from 'vitest';
import { camelBoundaries, stemOf, stemPrefix } from '../../src-api/modules/search/analyzer';
import { SearchIndex, type IndexableAgent } from '../../src-api/modules/search/search-index';
import { indexTerms, parseQuery } from '../../src-api/modules/search/text';
import { indexableAgent } from '../helpers/indexable-agent';

let sequence = 0;
function agent(overrides: Partial<IndexableAgent> = {}): IndexableAgent {
  sequence++;
  return indexableAgent(`analyzer-${sequence}`, `Plain ${sequence}`, overrides);
}

function indexOf(agents: IndexableAgent[]): SearchIndex {
  const index = new SearchIndex();
  for (const each of agents) index.apply(each);
  index.compact();
  return index;
}

const ids = (hits: { id: string }[]) => hits.map((hit) => hit.id);

describe('analyzer: stems', () => {
  it('gives the forms of a word one stem', () => {
    const same = (words: string[]) => expect(new Set(words.map(stemOf)).size, words.join(', ')).toBe(1);
    same(['summarize', 'summarizer', 'summarization', 'summarizes']);
    same(['deploy', 'deploys', 'deploying', 'deployment', 'deployments']);
    same(['translate', 'translator', 'translation', 'translators']);
    same(['agent', 'agents']);
    same(['review', 'reviews', 'reviewer']);
    same(['summary', 'summaries']);
  });

  it('leaves short words, digits and unrelated words apart', () => {
    expect(stemOf('ai')).toBe('ai');
    expect(stemOf('gpt4')).toBe('gpt4');
    expect(stemOf('data')).toBe('data');
    expect(stemOf('code')).not.toBe(stemOf('coder'));
  });

  it('knows a prefix every word of a stem starts with', () => {
    for (const word of ['hoping', 'summary', 'deploys', 'translator', 'summarization']) {
      expect(word.startsWith(stemPrefix(stemOf(word))), word).toBe(true);
    }
  });
});

describe('analyzer: camel case', () => {
  it('splits words written in camel case and keeps the whole word too', () => {
    expect(camelBoundaries('CodeReviewer', 0, 12)).toEqual([0, 4, 12]);
    expect(camelBoundaries('XMLParser', 0, 9)).toEqual([0, 3, 9]);
    expect(camelBoundaries('lowercase', 0, 9)).toBeNull();
    expect(camelBoundaries('ALLCAPS', 0, 7)).toBeNull();
    expect(indexTerms('SuperCodeReviewer my_agent.v2', true)).toEqual([
      'super',
      'code',
      'reviewer',
      'supercodereviewer',
      'my',
      'agent',
      'v2',
    ]);
    expect(parseQuery('CodeReviewer', 16).terms).toEqual(['code', 'reviewer']);
  });
});

describe('analyzer: in the index', () => {
  const summarizer = agent({ name: 'Brief', description: 'Text summarization for long reports.' });
  const deployer = agent({ name: 'Shipper', description: 'It deploys containers to the cloud.' });
  const translator = agent({ name: 'Babel', tagline: 'A translator for forty languages' });
  const camel = agent({ name: 'CodeReviewer', description: 'Leaves comments.' });
  const hyphen = agent({ name: 'pdf-extract.tool_kit', description: 'Reads files.' });
  const exactForm = agent({ name: 'Deployment Planner', description: 'Plans each deployment.' });
  const otherForm = agent({ name: 'Deploys Planner', description: 'Plans what it deploys.' });
  const index = indexOf([summarizer, deployer, translator, camel, hyphen, exactForm, otherForm]);

  it('finds other forms of a word', () => {
    expect(ids(index.search('summarize', 5).hits)).toContain(summarizer.id);
    expect(ids(index.search('summarizer', 5).hits)).toContain(summarizer.id);
    expect(ids(index.search('deployment', 5).hits)).toContain(deployer.id);
    expect(ids(index.search('translate', 5).hits)).toContain(translator.id);
  });

  it('finds a misspelt form of a word too far from every indexed form for the typo rule', () => {
    // "translatr" is three edits from "translation" and from "translator"'s other forms but one from "translator"…
    const translation = agent({ name: 'Polyglot', description: 'Document translation in real time.' });
    const forms = indexOf([translation, deployer]);
    expect(ids(forms.search('translatr', 5).hits)).toEqual([translation.id]);
    // …and "deploymnt" three from "deploys" ("deploy" + "mnt" dropped).
    expect(ids(forms.search('deploymnt', 5).hits)).toEqual([deployer.id]);
    // A word that is none of these finds nothing.
    expect(forms.search('quorvantix', 5).hits).toEqual([]);
  });

  it('ranks the exact form above other forms', () => {
    const hits = ids(index.search('deployment', 5).hits);
    expect(hits.indexOf(exactForm.id)).toBeLessThan(hits.indexOf(otherForm.id));
    const reverse = ids(index.search('deploys', 5).hits);
    expect(reverse.indexOf(otherForm.id)).toBeLessThan(reverse.indexOf(exactForm.id));
  });

  it('counts the words of camel-cased, hyphenated, dotted and underscored names as words', () => {
    expect(ids(index.search('reviewer', 5).hits)).toContain(camel.id);
    expect(ids(index.search('codereviewer', 5).hits)).toContain(camel.id);
    expect(ids(index.search('code reviewer', 5).hits)[0]).toBe(camel.id);
    for (const word of ['extract', 'tool', 'kit']) expect(ids(index.search(word, 5).hits), word).toContain(hyphen.id);
  });

  it('weighs a word in the author below the same word in name, tagline or capabilities', () => {
    const byAuthor = agent({ name: 'Kestrel One', tagline: 'A helper', author: 'Kestrel Security', type: 'other' });
    const byName = agent({ name: 'Security Scanner', tagline: 'Scans', description: 'A long description of what it does all day.' });
    const byTagline = agent({ name: 'Watcher', tagline: 'Security for your repos and much else besides' });
    const byCapability = agent({ name: 'Auditor', capabilities: ['security'] });
    const weighted = indexOf([byAuthor, byName, byTagline, byCapability]);
    const hits = ids(weighted.search('security', 10).hits);
    expect(hits).toHaveLength(4);
    expect(hits[3]).toBe(byAuthor.id);
  });
});
