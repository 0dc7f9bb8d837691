import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Config } from '../../src-api/config';
import type { Db } from '../../src-api/db/client';
import { buildApp } from '../../src-api/http/app';
import { createServices, type Services } from '../../src-api/services';
import { agents, type AgentRow } from '../../src-api/modules/agents/agents.table';
import { agentRow } from '../../test/helpers/both-stores';
import { argument } from './cli';

/** `--name value` from the command line, else `fallback`. */
export const cliArg = (name: string, fallback: string): string => argument(name) ?? fallback;

/** The options every A/B script takes: the other checkout, the directory's size, rounds and calls per round. */
export function abOptions(defaults: { ops: number }) {
  return {
    base: path.resolve(cliArg('base', '/work/main')),
    agentCount: Number(cliArg('agents', '2000')),
    rounds: Number(cliArg('rounds', '15')),
    ops: Number(cliArg('ops', String(defaults.ops))),
  };
}

/**
 * The other checkout's services and app (`base`, its own modules) next to this checkout's, both
 * over the SQLite file `file` that `db` has open.
 */
export async function servicesSideBySide(base: string, file: string, db: Db, config: Config) {
  const fromBase = (module: string) => import(path.join(base, 'src-api', module));
  const [{ createServices: createBase }, { openDatabase: openBase }, { buildApp: buildBase }] = await Promise.all([
    fromBase('services.ts'),
    fromBase('db/client.ts'),
    fromBase('http/app.ts'),
  ]);
  const baseServices = createBase({ db: openBase(file), config }) as Services;
  const services = createServices({ db, config });
  const [baseApp, app] = await Promise.all([
    buildBase({ services: baseServices, config }) as ReturnType<typeof buildApp>,
    buildApp({ services, config }),
  ]);
  return { baseServices, services, baseApp, app };
}

/** Eight words the A/B directories' names and taglines are made of (two-word searches pick among them). */
export const AB_WORDS = ['search', 'code', 'data', 'mail', 'image', 'voice', 'travel', 'legal'];

/** `count` agents agt_000000… written straight into `db` (one transaction), `extra` adding fields per agent. */
export function seedAbAgents(db: Db, count: number, extra: (i: number) => Partial<AgentRow> = () => ({})): string[] {
  const ids = Array.from({ length: count }, (_, i) => `agt_${String(i).padStart(6, '0')}`);
  db.$client.transaction(() => {
    for (const [i, id] of ids.entries())
      db.insert(agents)
        .values(
          agentRow({
            id,
            name: `Agent ${i} ${AB_WORDS[i % 8]}`,
            tagline: `Does ${AB_WORDS[i % 8]} and ${AB_WORDS[(i * 3) % 8]}`,
            sourceUrl: `https://example.org/${id}`,
            sourceUrlKey: `example.org/${id}`,
            trustScore: (i * 37) % 100,
            changeSeq: i + 1,
            ...extra(i),
          }),
        )
        .run();
  })();
  return ids;
}

/** µs per call of `run` over `n` calls, each awaited (the synchronous ones too: the routes that call them are async). */
async function measure(run: (i: number) => unknown, n: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < n; i++) await run(i);
  return ((performance.now() - start) * 1000) / n;
}

/**
 * Another checkout's calls (`base`) against this checkout's (`current`), each name in turn, the
 * order of the two flipped every round so neither always runs warm; a warm-up of ops / 4 first.
 * Prints µs per call (median of the rounds) and the ratio this/base.
 */
export async function alternate<Names extends string>(
  base: Record<Names, (i: number) => unknown>,
  current: Record<Names, (i: number) => unknown>,
  { rounds, ops, width = 30 }: { rounds: number; ops: number; width?: number },
): Promise<void> {
  const names = Object.keys(base) as Names[];
  const samples = new Map<Names, [number[], number[]]>(names.map((name) => [name, [[], []]]));
  for (const name of names) {
    await measure(base[name], ops / 4);
    await measure(current[name], ops / 4);
  }
  for (let round = 0; round < rounds; round++)
    for (const name of names) {
      const [b, a] = samples.get(name)!;
      if (round % 2) {
        a.push(await measure(current[name], ops));
        b.push(await measure(base[name], ops));
      } else {
        b.push(await measure(base[name], ops));
        a.push(await measure(current[name], ops));
      }
    }
  const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
  for (const name of names) {
    const [b, a] = samples.get(name)!.map(median) as [number, number];
    console.log(`${name.padEnd(width)} base ${b.toFixed(1).padStart(8)} µs   this ${a.toFixed(1).padStart(8)} µs   ${(a / b).toFixed(3)}×`);
  }
}
