/** What the bench's scripts read from their command line, and the load average they print beside each figure. */
import os from 'node:os';
import { SEARCH_CLASSES, type SearchClass } from './dataset';

/** `--name value` from the command line (undefined when not given). */
export const argument = (name: string): string | undefined => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : undefined;
};

/** `--classes one,two`: the search classes named (a prefix is enough), all of them when not given. */
export const chosenClasses = (): SearchClass[] =>
  (argument('classes')?.split(',') ?? SEARCH_CLASSES).map(
    (name) => SEARCH_CLASSES.find((kind) => kind.startsWith(name)) ?? name,
  ) as SearchClass[];

/** The load averages (1, 5, 15 minutes), for the first and last line of a run: figures taken on a busy machine are ratios only. */
export const loadAverage = (): string =>
  os
    .loadavg()
    .map((n) => n.toFixed(1))
    .join(' ');
