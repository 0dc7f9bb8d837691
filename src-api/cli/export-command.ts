import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { exportAgents } from '../modules/agents/agents-export';
import { addDataDirOption, CliError, fileErrorMessage, plural, withServices, type DataDirFlags } from './context';

interface ExportFlags extends DataDirFlags {
  includeUnlisted?: boolean;
}

export function registerExportCommand(program: Command): void {
  addDataDirOption(
    program
      .command('export')
      .description('Write every listed agent as JSONL (one API profile per line), re-importable with "import"')
      .argument('<file>', 'the file to write (replaced atomically), or - for stdout')
      .option('--include-unlisted', 'also export unlisted agents; every line then carries "listed": true|false'),
  ).action(async (file: string, flags: ExportFlags) => {
    const options = { includeUnlisted: flags.includeUnlisted === true };
    if (file === '-') {
      const count = await withServices(flags, ({ store }) => exportAgents(store, (chunk) => process.stdout.write(chunk), options));
      // stdout carries the data, so the summary goes to stderr.
      process.stderr.write(`Exported ${plural(count, 'agent')} to stdout\n`);
      return;
    }

    const target = path.resolve(file);
    if (fs.statSync(target, { throwIfNoEntry: false })?.isDirectory()) throw new CliError(`cannot write ${file}: it is a directory`);
    // Written beside the target, then renamed over it: readers see the old file or the whole new one.
    const temp = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    let fd: number;
    try {
      fd = fs.openSync(temp, 'wx');
    } catch (error) {
      throw new CliError(fileErrorMessage(error, file, 'write'));
    }
    let count: number;
    try {
      try {
        count = await withServices(flags, ({ store }) => exportAgents(store, (chunk) => fs.writeSync(fd, chunk), options));
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(temp, target);
    } catch (error) {
      fs.rmSync(temp, { force: true });
      if ((error as NodeJS.ErrnoException).code) throw new CliError(fileErrorMessage(error, file, 'write'));
      throw error;
    }
    console.log(`Exported ${plural(count, 'agent')} to ${file}`);
  });
}
