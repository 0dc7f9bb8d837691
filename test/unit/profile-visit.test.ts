import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createConfig, databasePath } from '../../src-api/config';
import { openDatabase } from '../../src-api/db/client';
import { createServices } from '../../src-api/services';
import { agentInput, makeTempDir } from '../helpers/test-server';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * `count` new agents in a fresh directory, and SQLite's synchronous profile cache as search reads it
 * (agents.searchSync): `visited` lists what visitMany hands out (with `slots` as handles under `tag`, if given),
 * `expected` what getMany finds, both as [place in the ids asked, profile text].
 */
async function agentsWithProfiles(name: string, count: number, slots?: number[]) {
  const dataDir = makeTempDir();
  dirs.push(dataDir);
  const config = createConfig({ dataDir: path.resolve(dataDir), demoData: false });
  const services = createServices({ db: openDatabase(databasePath(config)), config });
  const ids: string[] = [];
  for (let i = 0; i < count; i++)
    ids.push((await services.agents.edits.create(agentInput({ name: `${name} ${i}` }), { emitEvents: false })).id);
  const { profiles } = services.agents.searchSync!;
  const visited = (asked: string[], tag = 1) => {
    const out: [number, string][] = [];
    const handles = slots && { slots, tag };
    profiles.visitMany(asked, (index, bytes, start, end) => out.push([index, bytes.toString('utf8', start, end)]), handles);
    return out;
  };
  const expected = (asked: string[]) => {
    const found = profiles.getMany(asked);
    return asked.flatMap((id, index): [number, string][] => (found.has(id) ? [[index, found.get(id)!.toString('utf8')]] : []));
  };
  return { services, ids, profiles, visited, expected };
}

describe('profile cache: visitMany', () => {
  it('hands out the same bytes as getMany, in the order asked, cached or not, skipping ids without a profile', async () => {
    const { ids, profiles, visited, expected } = await agentsWithProfiles('Visit Agent', 6);
    // Half cached first: a cached run, then a miss part-way (the rest through the database), an unknown id among them.
    profiles.getMany([ids[0]!, ids[2]!]);
    const asked = [ids[2]!, ids[0]!, ids[5]!, 'no-such-agent', ids[1]!, ids[3]!];
    const first = visited(asked);
    expect(first.map(([index]) => index)).toEqual([0, 1, 2, 4, 5]);
    expect(first).toEqual(expected(asked));
    // All cached now: the same again.
    expect(visited(asked)).toEqual(first);
    expect(visited([])).toEqual([]);
  });

  it('with handles (search: index slots), hands out an edited or unlisted agent’s profile as it is now', async () => {
    const { services, ids, visited, expected } = await agentsWithProfiles('Handle Agent', 4, [3, 0, 2, 1]);
    expect(visited(ids)).toEqual(expected(ids));
    // Noted under their handles now: an edit and an unlisting must not hand out the noted bytes.
    expect(visited(ids)).toEqual(expected(ids));
    await services.agents.edits.update(ids[1]!, { tagline: 'Edited after it was noted' }, { emitEvents: false });
    await services.agents.edits.setListed(ids[2]!, false, { emitEvents: false });
    const after = visited(ids);
    expect(after).toEqual(expected(ids));
    expect(after.map(([index]) => index)).toEqual([0, 1, 3]);
    expect(after[1]![1]).toContain('Edited after it was noted');
    // Other ids under the handles noted for other agents, under a new tag (search: after a compaction renumbered
    // the slots): each id's own profile.
    const swapped = [ids[3]!, ids[0]!, ids[1]!, ids[2]!];
    expect(visited(swapped, 2)).toEqual(expected(swapped));
    expect(visited(swapped, 2)).toEqual(expected(swapped));
  });
});
