import { Command, CommanderError } from 'commander';
import { registerAccountsCommand } from './cli/accounts-command';
import { registerBackupCommand } from './cli/backup-command';
import { CliError } from './cli/context';
import { registerCopyDataCommand } from './cli/copy-data-command';
import { registerExportCommand } from './cli/export-command';
import { registerImportCommand } from './cli/import-command';
import { registerKeysCommand } from './cli/keys-command';
import { registerWebhooksCommand } from './cli/webhooks-command';
import { ConfigError } from './config';
import { isAppError } from './errors';

/**
 * `npm run cli -- <command>`: maintenance commands over a data dir, safe while
 * a server runs on it. Each command group lives in its own module under
 * src-api/cli/ and registers itself here; this file only composes them and
 * maps the outcome to an exit code:
 *   0 success · 1 failure (message on stderr, no stack trace) · 2 usage error.
 */
const COMMAND_GROUPS: ((program: Command) => void)[] = [
  registerImportCommand,
  registerExportCommand,
  registerKeysCommand,
  registerWebhooksCommand,
  registerAccountsCommand,
  registerBackupCommand,
  registerCopyDataCommand,
];

const EXIT_OK = 0;
const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;

function buildProgram(): Command {
  const program = new Command('cli')
    .description(
      'Agent Directory maintenance commands (import, export, API keys, webhooks, accounts, backup, restore, copy-data) over a data dir',
    )
    .usage('<command> [options]')
    // Throw instead of exiting, so that main() decides the exit code. Set before
    // the commands are added: subcommands inherit these settings.
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)');
  for (const register of COMMAND_GROUPS) register(program);
  program.addHelpText(
    'after',
    '\nEvery command takes --help, and every one but copy-data (which takes --from and --to) --data-dir DIR (default ./data,\n' +
      'env AGENTDIR_DATA_DIR) and --database sqlite:<path> (env AGENTDIR_DATABASE_URL).',
  );
  return program;
}

async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv, { from: 'user' });
    return EXIT_OK;
  } catch (error) {
    return reportError(error);
  }
}

function reportError(error: unknown): number {
  if (error instanceof CommanderError) {
    // Commander has printed the help or the usage error already. Help that was asked for
    // (--help, `help import`) is a success; help shown because no command was given is not.
    const helpAsked =
      error.code === 'commander.helpDisplayed' ||
      error.code === 'commander.version' ||
      (error.code === 'commander.help' && error.exitCode === 0);
    return helpAsked ? EXIT_OK : EXIT_USAGE;
  }
  if (error instanceof CliError || error instanceof ConfigError || isAppError(error)) {
    console.error(`error: ${error.message}`);
    return EXIT_FAILURE;
  }
  // A bug, not a user error: still one line, the stack only on request.
  const message = error instanceof Error ? error.message : String(error);
  console.error(`error: unexpected failure: ${message}`);
  if (process.env.AGENTDIR_DEBUG && error instanceof Error && error.stack) console.error(error.stack);
  else console.error('(set AGENTDIR_DEBUG=1 for details)');
  return EXIT_FAILURE;
}

// `export -` into a pipe that closes early (`| head`) is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(EXIT_OK);
  throw error;
});

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
