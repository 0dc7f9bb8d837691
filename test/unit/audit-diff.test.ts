import { describe, expect, it } from 'vitest';
import { describeChange, diffValues, entityName, formatValue, summarize } from '../../src-renderer/components/audit/audit-diff';

/** The console's before/after comparison of audit entries. */
describe('diffValues', () => {
  it('marks changed and unchanged fields, keeping the order of the record', () => {
    const rows = diffValues({ id: 'k1', name: 'A', revoked_at: null }, { id: 'k1', name: 'A', revoked_at: '2025-01-01T00:00:00.000Z' });
    expect(rows).toEqual([
      { path: 'id', kind: 'unchanged', before: 'k1', after: 'k1' },
      { path: 'name', kind: 'unchanged', before: 'A', after: 'A' },
      { path: 'revoked_at', kind: 'changed', before: null, after: '2025-01-01T00:00:00.000Z' },
    ]);
  });

  it('treats a missing before as a creation and a missing after as a removal', () => {
    expect(diffValues(null, { a: 1, b: 2 }).map((row) => row.kind)).toEqual(['added', 'added']);
    expect(diffValues({ a: 1 }, undefined).map((row) => row.kind)).toEqual(['removed']);
    expect(diffValues(null, null)).toEqual([]);
  });

  it('flattens nested objects to dotted paths and compares arrays whole', () => {
    const rows = diffValues(
      { rating: { average: 4, count: 2 }, capabilities: ['a', 'b'] },
      { rating: { average: 4.5, count: 2 }, capabilities: ['a', 'b'], extra: true },
    );
    expect(rows.map((row) => [row.path, row.kind])).toEqual([
      ['rating.average', 'changed'],
      ['rating.count', 'unchanged'],
      ['capabilities', 'unchanged'],
      ['extra', 'added'],
    ]);
    expect(diffValues({ tags: ['a', 'b'] }, { tags: ['b', 'a'] })[0]!.kind).toBe('changed');
  });

  it('ignores key order inside compared values', () => {
    expect(diffValues({ v: [{ a: 1, b: 2 }] }, { v: [{ b: 2, a: 1 }] })[0]!.kind).toBe('unchanged');
  });

  it('compares values that are not objects as one row', () => {
    expect(diffValues('old', 'new')).toEqual([{ path: '', kind: 'changed', before: 'old', after: 'new' }]);
  });
});

describe('summaries', () => {
  it('counts the kinds', () => {
    expect(summarize(diffValues({ a: 1, b: 2, c: 3 }, { a: 1, b: 3, d: 4 }))).toEqual({ added: 1, removed: 1, changed: 1, unchanged: 1 });
  });

  it('says in one line what an entry changed', () => {
    expect(describeChange(null, { a: 1, b: 2 })).toBe('Created with 2 fields');
    expect(describeChange(null, { a: 1, b: 2 }, 'agent.create')).toBe('Created with 2 fields');
    // A test send records what was sent; it creates nothing.
    expect(describeChange(null, { event: 'agent.updated', status: 200 }, 'webhook.test')).toBe('Recorded: event, status');
    expect(describeChange({ a: 1 }, null)).toBe('Removed (1 field)');
    expect(describeChange({ a: 1, b: 1 }, { a: 1, b: 2 })).toBe('b');
    expect(describeChange({ a: 1 }, { a: 1 })).toBe('No field changed');
    expect(describeChange(null, null)).toBe('No recorded fields');
    expect(describeChange({ a: 1, b: 1, c: 1, d: 1, e: 1 }, { a: 2, b: 2, c: 2, d: 2, e: 2 })).toBe('a, b, c +2 more');
  });

  it('shows strings as they are and everything else as JSON', () => {
    expect(formatValue('text')).toBe('text');
    expect(formatValue(null)).toBe('null');
    expect(formatValue(['a'])).toBe('["a"]');
    expect(formatValue(undefined)).toBe('');
  });
});

describe('entityName', () => {
  it('names the record from what the entry recorded: after first, then before', () => {
    expect(entityName(null, { name: 'Paper Digest', tagline: 'x' })).toBe('Paper Digest');
    expect(entityName({ url: 'https://hooks.example/a' }, null)).toBe('https://hooks.example/a');
    expect(entityName({ email: 'mod@example.com' }, { roles: ['moderator'] })).toBe('mod@example.com');
    expect(entityName(null, { verified: true })).toBeNull();
    expect(entityName('text', [1, 2])).toBeNull();
  });
});
