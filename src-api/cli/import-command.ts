import fs from 'node:fs';
import path from 'node:path';
import cliProgress from 'cli-progress';
import { Option, type Command } from 'commander';
import { sql } from 'drizzle-orm';
import { importAgents, type ImportProgress } from '../modules/agents/agents-import';
import { ImportRejectedError, type ImportIssue, type ImportRecord } from '../modules/agents/import-records';
import { readMcpRegistry } from '../modules/agents/mcp-registry';
import { addDataDirOption, CliError, fileErrorMessage, formatCount, plural, withServices, type DataDirFlags } from './context';
import { readRecordsFromBytes } from './read-records';

/**
 * SQLite's page cache for the import's connection, in KiB. An import writes every agent in one transaction, and
 * each agent goes into the table and 14 indexes, half of them keyed by id, name or source URL (no order an import
 * follows). With this build's default cache of 16 MB those index pages were evicted, read back and spilled to the
 * WAL over and over: 1,000,000 agents took 112–123 s (72–78 s user, 31–38 s system CPU), 85–89 s (63 / 18–19) with this.
 * The memory is the import process's only, and freed when it ends.
 */
const IMPORT_PAGE_CACHE_KIB = 256 * 1024;

/** Issues printed before "… and N more". */
const MAX_REPORTED_ISSUES = 100;

const FORMATS = ['agents', 'mcp-registry'] as const;

interface ImportFlags extends DataDirFlags {
  emitEvents?: boolean;
  format: (typeof FORMATS)[number];
}

export function registerImportCommand(program: Command): void {
  addDataDirOption(
    program
      .command('import')
      .description('Import agents from a JSON array or a JSONL file, all or nothing')
      .argument('<file>', 'a JSON array of agents, or JSONL (one agent per line)')
      .option('--emit-events', 'record webhook events for the changes (agent.registered, agent.updated, agent.verified); default: none')
      .addOption(
        new Option('--format <format>', 'agents (records as below) or mcp-registry (MCP Registry server.json entries)')
          .choices(FORMATS)
          .default('agents'),
      ),
  )
    .addHelpText(
      'after',
      `
Records have the fields of an agent: name, tagline, source_url (required for a
new agent), description, author, capabilities, categories, type; optionally:
  id           an existing agent is updated (only the fields given); an unknown
               id is created with that id; no id: a new agent, id generated
  verified     applied when given
  listed       applied when given (written by export --include-unlisted)
  created_at, updated_at
               kept for new agents, ignored for updates
  trust_score, rating
               computed by the directory: accepted and ignored
so that a file written by "export" imports back as it was.

--format mcp-registry reads MCP Registry server.json entries instead (one, an
array, or a registry list answer {"servers":[…]}): name/title, description,
repository (or websiteUrl, or a remote) become the profile, packages and remotes
become capabilities (mcp, npm, pypi, oci, streamable-http, …); the id is
mcp-<name>, so importing a server again updates it.

Every record is checked first (fields, duplicate ids, a source_url used by two
agents); if any is invalid, each problem is reported with its line and nothing
is written. Otherwise everything is written in one transaction.`,
    )
    .action(async (file: string, flags: ImportFlags) => {
      const started = performance.now();
      let bytes: Buffer;
      try {
        // Bytes, not a string: a JSONL file of 1,000,000 agents is longer than V8's longest string.
        bytes = fs.readFileSync(path.resolve(file));
      } catch (error) {
        throw new CliError(fileErrorMessage(error, file, 'read'));
      }

      let records: ImportRecord[];
      if (flags.format === 'mcp-registry') {
        const read = readMcpRegistry(bytes.toString('utf8'));
        if (read.issues.length > 0) {
          reportIssues(read.issues);
          throw new CliError(`${file} has invalid server.json entries (${plural(read.issues.length, 'error')}); nothing was imported`);
        }
        records = read.records;
      } else {
        const read = readRecordsFromBytes(bytes);
        if (read.issues.length > 0) {
          reportIssues(read.issues);
          throw new CliError(
            `${file} is not valid ${read.format === 'json' ? 'JSON' : 'JSONL'} (${plural(read.issues.length, 'error')}); nothing was imported`,
          );
        }
        records = read.records;
      }

      const progress = process.stderr.isTTY ? createProgressBar() : undefined;
      const summary = await withServices(flags, async (services) => {
        if (services.store.dialect === 'sqlite') await services.store.run(sql.raw(`PRAGMA cache_size = -${IMPORT_PAGE_CACHE_KIB}`));
        try {
          return await importAgents(services, records, {
            emitEvents: flags.emitEvents === true,
            actor: 'cli',
            source: path.basename(file),
            onProgress: progress?.update,
          });
        } catch (error) {
          if (error instanceof ImportRejectedError) {
            progress?.stop();
            reportIssues(error.issues);
            throw new CliError(`${file}: ${error.message}`);
          }
          throw error;
        } finally {
          progress?.stop();
        }
      });

      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      console.log(
        `Imported ${plural(summary.total, 'agent')}: ${formatCount(summary.created)} created, ${formatCount(summary.updated)} updated, ` +
          `${formatCount(summary.unchanged)} unchanged (${seconds} s)`,
      );
    });
}

/** One line per problem on stderr: `line 7: /source_url must be an absolute http or https URL`. */
function reportIssues(issues: readonly ImportIssue[]): void {
  const lines = issues.slice(0, MAX_REPORTED_ISSUES).map((issue) => {
    const where = issue.index === undefined ? `line ${issue.line}` : `line ${issue.line} (index ${issue.index})`;
    return `${where}: ${issue.pointer ? `${issue.pointer} ` : ''}${issue.detail}`;
  });
  if (issues.length > MAX_REPORTED_ISSUES) lines.push(`… and ${formatCount(issues.length - MAX_REPORTED_ISSUES)} more`);
  process.stderr.write(`${lines.join('\n')}\n`);
}

/** A progress bar on stderr (only created when stderr is a terminal). */
function createProgressBar() {
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: '{phase} |{bar}| {percentage}% | {value}/{total} agents',
      hideCursor: true,
      clearOnComplete: true,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  let stopped = false;
  const labels: Record<ImportProgress['phase'], string> = { validating: 'Checking', writing: 'Writing ' };
  return {
    update: ({ phase, done, total }: ImportProgress) => {
      if (stopped) return;
      if (!started) {
        bar.start(total, done, { phase: labels[phase] });
        started = true;
      } else bar.update(done, { phase: labels[phase] });
    },
    stop: () => {
      if (started && !stopped) bar.stop();
      stopped = true;
    },
  };
}
