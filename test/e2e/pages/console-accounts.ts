import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, type Page } from '@playwright/test';
import { uniqueSuffix } from './directory-fixtures';

/** People of the console: accounts made with the CLI against the server's data dir, as an operator makes the first admin. */

export interface ConsoleAccount {
  id: string;
  email: string;
  name: string;
  password: string;
}

/** `cli accounts create --role … --password-stdin`: a verified account that can sign in at once (role omitted: a plain developer). */
export function createConsoleAccount(name: string, role?: 'moderator' | 'admin'): ConsoleAccount {
  const email = `${name.toLowerCase().replace(/[^a-z]+/g, '.')}.${uniqueSuffix()}@console.example`;
  const password = `a long passphrase ${uniqueSuffix()}`;
  const output = execFileSync(
    process.execPath,
    [
      path.join('node_modules', 'tsx', 'dist', 'cli.mjs'),
      'src-api/cli.ts',
      'accounts',
      'create',
      '--email',
      email,
      '--name',
      name,
      ...(role ? ['--role', role] : []),
      '--password-stdin',
      '--data-dir',
      process.env.AGENTDIR_E2E_DATA_DIR!,
    ],
    { input: password, stdio: ['pipe', 'pipe', 'pipe'], timeout: 60_000 },
  ).toString();
  const account = JSON.parse(output) as { id: string; email: string };
  expect(account.email).toBe(email);
  return { id: account.id, email, name, password };
}

/** The sidebar's entries, by route name, in order. */
export async function navEntries(page: Page): Promise<string[]> {
  const links = await page.locator('nav [data-testid^="nav-"]').all();
  const ids = await Promise.all(links.map((link) => link.getAttribute('data-testid')));
  return ids.map((id) => String(id).replace(/^nav-/, ''));
}

export const MODERATOR_SCREENS = ['overview', 'submissions', 'claims', 'edit-requests', 'reports', 'agents', 'marketing'];
export const ADMIN_SCREENS = [...MODERATOR_SCREENS, 'webhooks', 'api-keys', 'newsletter', 'audit-log'];
