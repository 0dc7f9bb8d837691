import type { Command } from 'commander';
import { z } from 'zod';
import { addDataDirOption, argParser, withServices, type DataDirFlags } from './context';

const keyNameSchema = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');

export function registerKeysCommand(program: Command): void {
  const keys = program
    .command('keys')
    .description('Manage API keys (adk_…): create, list, revoke')
    .addHelpText('after', '\nA key is stored only as a hash: "keys create" shows it once.');

  addDataDirOption(
    keys
      .command('create')
      .description('Issue an API key; prints {"id","key",…} as one JSON line (the key is shown only this once)')
      .requiredOption(
        '--name <name>',
        'what the key is for, e.g. the client or its owner',
        argParser((value) => {
          const result = keyNameSchema.safeParse(value);
          if (!result.success) throw new Error(`the name ${result.error.issues[0]?.message ?? 'is invalid'}`);
          return result.data;
        }),
      ),
  ).action(async (flags: DataDirFlags & { name: string }) => {
    const created = await withServices(flags, ({ keys }) => keys.create(flags.name, 'cli'));
    const { id, key, ...summary } = created;
    console.log(JSON.stringify({ id, key, ...summary }));
    if (process.stderr.isTTY) process.stderr.write('Store the key now: it cannot be shown again.\n');
  });

  addDataDirOption(keys.command('list').description('List API keys as a JSON array (never the keys themselves)')).action(
    async (flags: DataDirFlags) => {
      const list = await withServices(flags, ({ keys }) => keys.list());
      console.log(JSON.stringify(list, null, 2));
    },
  );

  addDataDirOption(
    keys
      .command('revoke')
      .description('Revoke an API key at once (also for a server running on the data dir); prints it as JSON')
      .argument('<id>', 'the key id (key_…)'),
  ).action(async (id: string, flags: DataDirFlags) => {
    const revoked = await withServices(flags, ({ keys }) => keys.revoke(id, 'cli'));
    console.log(JSON.stringify(revoked));
  });
}
