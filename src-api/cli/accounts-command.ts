import { Option, type Command } from 'commander';
import { emailSchema } from '../lib/schemas';
import { ACCOUNT_ROLES, type AccountRole } from '../modules/accounts/accounts.table';
import { addDataDirOption, argParser, CliError, withServices, type DataDirFlags } from './context';

/**
 * `cli accounts create|list|grant|revoke-role`: accounts made and given roles by
 * whoever runs the server, e.g. the first admin of a fresh directory. Audited as "cli".
 */

const ACTOR = 'cli';

const parseEmail = argParser((value: string) => {
  const result = emailSchema.safeParse(value);
  if (!result.success) throw new Error(`"${value}" is not an e-mail address`);
  return result.data;
});

const roleOption = (description: string) => new Option('--role <role>', description).choices(ACCOUNT_ROLES);

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY)
    throw new CliError('--password-stdin reads the password from a pipe, e.g. `printf %s "$PASSWORD" | npm run cli -- …`');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // One trailing newline (echo, a heredoc) is not part of the password.
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

export function registerAccountsCommand(program: Command): void {
  const accounts = program
    .command('accounts')
    .description('Manage accounts and their console roles (moderator, admin): create, list, grant, revoke-role')
    .addHelpText('after', '\nPeople sign in to the console with an account that has a role; create the first admin here.');

  addDataDirOption(
    accounts
      .command('create')
      .description('Create a verified account; prints it as JSON with a one-time link (72 h) to set its password')
      .requiredOption('--email <email>', 'its e-mail address', parseEmail)
      .requiredOption(
        '--name <name>',
        'the name shown in the console and the audit log',
        argParser((value: string) => {
          const name = value.trim();
          if (!name || name.length > 100) throw new Error('the name must be 1–100 characters');
          return name;
        }),
      )
      .addOption(roleOption('a console role to give it'))
      .option('--password-stdin', 'set the password read from stdin instead of printing a link'),
  ).action(async (flags: DataDirFlags & { email: string; name: string; role?: AccountRole; passwordStdin?: boolean }) => {
    const password = flags.passwordStdin ? await readStdin() : undefined;
    const created = await withServices(flags, ({ accounts: service }) =>
      service.createVerified(
        { email: flags.email, name: flags.name, roles: flags.role ? [flags.role] : [], ...(password !== undefined && { password }) },
        ACTOR,
      ),
    );
    console.log(JSON.stringify({ ...created.account, ...(created.setPasswordUrl && { set_password_url: created.setPasswordUrl }) }));
    if (created.setPasswordUrl && process.stderr.isTTY)
      process.stderr.write('Hand the link to its owner: it sets the password once, within 72 hours.\n');
  });

  addDataDirOption(
    accounts
      .command('list')
      .description('List accounts as a JSON array, newest first')
      .addOption(roleOption('only accounts with this role'))
      .option('--search <text>', 'part of the e-mail or the name'),
  ).action(async (flags: DataDirFlags & { role?: AccountRole; search?: string }) => {
    const list = await withServices(flags, async ({ accounts: service }) => {
      const all = [];
      for (let page = 1; ; page++) {
        const result = await service.list({
          page,
          limit: 100,
          ...(flags.role && { role: flags.role }),
          ...(flags.search && { q: flags.search }),
        });
        all.push(...result.items);
        if (page * 100 >= result.total) return all;
      }
    });
    console.log(JSON.stringify(list, null, 2));
  });

  addDataDirOption(
    accounts
      .command('grant')
      .description('Give an account a console role; prints the account as JSON')
      .argument('<email>', "the account's e-mail address", parseEmail)
      .addOption(roleOption('the role to give').makeOptionMandatory()),
  ).action(async (email: string, flags: DataDirFlags & { role: AccountRole }) => {
    const account = await withServices(flags, ({ accounts: service }) => service.grantRole({ email }, flags.role, ACTOR));
    console.log(JSON.stringify(account));
  });

  addDataDirOption(
    accounts
      .command('revoke-role')
      .description('Take a console role from an account; prints the account as JSON')
      .argument('<email>', "the account's e-mail address", parseEmail)
      .addOption(roleOption('the role to take').makeOptionMandatory()),
  ).action(async (email: string, flags: DataDirFlags & { role: AccountRole }) => {
    const account = await withServices(flags, ({ accounts: service }) => service.revokeRole({ email }, flags.role, ACTOR));
    console.log(JSON.stringify(account));
  });
}
