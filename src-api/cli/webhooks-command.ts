import { Option, type Command } from 'commander';
import { createConfig } from '../config';
import { httpUrlSchema } from '../lib/schemas';
import { EVENT_TYPES, type EventType } from '../modules/events/events.table';
import type { Services } from '../services';
import { addDataDirOption, argParser, cliConfig, CliError, withConfigServices, type DataDirFlags } from './context';

/**
 * `cli webhooks add|list|remove|test|rotate`. Safe while a server runs on the data
 * dir: its dispatcher polls the database, so a new endpoint receives the next
 * events without a restart. No command here runs the dispatcher; `test` sends
 * its one request itself.
 */

const ACTOR = 'cli';

function parseUrl(value: string): string {
  const result = httpUrlSchema.safeParse(value);
  if (!result.success) throw new Error(`the URL ${result.error.issues[0]?.message ?? 'is invalid'}`);
  return result.data;
}

function parseEventKind(value: string): EventType {
  const kind = value.trim();
  if (!(EVENT_TYPES as readonly string[]).includes(kind)) {
    throw new Error(`unknown event kind "${kind}"; the kinds are ${EVENT_TYPES.join(', ')}`);
  }
  return kind as EventType;
}

/** "a,b" → ["a","b"], each a known kind; empty means all kinds. */
function parseEventKinds(value: string): EventType[] {
  return [
    ...new Set(
      value
        .split(',')
        .map((part) => part.trim())
        .filter((part) => part.length > 0)
        .map(parseEventKind),
    ),
  ];
}

interface PrivateUrlFlags extends DataDirFlags {
  allowPrivateUrls?: boolean;
}

/** Like withServices, with --allow-private-urls honoured (test sends go out from this process). */
async function withWebhookServices<T>(flags: PrivateUrlFlags, work: (services: Services) => T | Promise<T>): Promise<T> {
  const base = cliConfig(flags);
  const config = flags.allowPrivateUrls ? createConfig({ ...base, allowPrivateUrls: true }) : base;
  return withConfigServices(config, work);
}

export function registerWebhooksCommand(program: Command): void {
  const webhooks = program
    .command('webhooks')
    .description('Manage webhook endpoints: add, list, remove, test, rotate')
    .addHelpText('after', `\nEvent kinds: ${EVENT_TYPES.join(', ')}.\nPayloads, signatures and retries: docs/webhooks.md.`);

  addDataDirOption(
    webhooks
      .command('add')
      .description('Add an endpoint; prints {"id","url","events","secret"} as one JSON line (events [] means all kinds)')
      .requiredOption('--url <url>', 'where deliveries are POSTed (absolute http or https URL)', argParser(parseUrl))
      .option('--events <kinds>', 'comma-separated event kinds to receive (default: all)', argParser(parseEventKinds))
      .option('--description <text>', 'what the endpoint is for'),
  ).action(async (flags: DataDirFlags & { url: string; events?: EventType[]; description?: string }) => {
    const created = await withWebhookServices(flags, ({ webhooks }) =>
      webhooks.add({ url: flags.url, events: flags.events ?? [], description: flags.description ?? '' }, { actor: ACTOR }),
    );
    console.log(JSON.stringify({ id: created.id, url: created.url, events: created.events, secret: created.secret }));
    if (process.stderr.isTTY)
      process.stderr.write('Give the secret to the receiver: it verifies webhook-signature (or X-Service-Signature) with it.\n');
  });

  addDataDirOption(webhooks.command('list').description('List endpoints as a JSON array (never their secrets)')).action(
    async (flags: DataDirFlags) => {
      const list = await withWebhookServices(flags, ({ webhooks }) => webhooks.list());
      console.log(JSON.stringify(list, null, 2));
    },
  );

  addDataDirOption(
    webhooks
      .command('remove')
      .description('Delete an endpoint and its delivery log; prints the removed endpoint as JSON')
      .argument('<id>', 'the endpoint id (whk_…)'),
  ).action(async (id: string, flags: DataDirFlags) => {
    const removed = await withWebhookServices(flags, ({ webhooks }) => webhooks.remove(id, { actor: ACTOR }));
    console.log(JSON.stringify(removed));
  });

  addDataDirOption(
    webhooks
      .command('rotate')
      .description(
        'Give an endpoint a new secret; prints {"id","secret","previous_secret_expires_at"} as JSON (the old secret also signs for 24 h)',
      )
      .argument('<id>', 'the endpoint id (whk_…)'),
  ).action(async (id: string, flags: DataDirFlags) => {
    const rotated = await withWebhookServices(flags, ({ webhooks }) => webhooks.rotateSecret(id, { actor: ACTOR }));
    console.log(JSON.stringify({ id: rotated.id, secret: rotated.secret, previous_secret_expires_at: rotated.previous_secret_expires_at }));
  });

  addDataDirOption(
    webhooks
      .command('test')
      .description("Send a sample event to an endpoint now; prints the receiver's answer as JSON (exit 1 unless 2xx)")
      .argument('<id>', 'the endpoint id (whk_…)')
      .addOption(
        new Option('--event <kind>', 'which sample event to send').default('agent.registered').argParser(argParser(parseEventKind)),
      )
      .option('--allow-private-urls', 'let the request reach private and loopback addresses (local testing)'),
  ).action(async (id: string, flags: PrivateUrlFlags & { event: EventType }) => {
    const result = await withWebhookServices(flags, ({ webhooks }) => webhooks.sendTest(id, flags.event, { actor: ACTOR }));
    console.log(JSON.stringify(result, null, 2));
    if (!result.ok) throw new CliError(`the test delivery failed: ${result.error ?? `status ${result.status_code}`}`);
  });
}
