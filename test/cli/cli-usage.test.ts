import { describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/test-store';
import { runCli, CLI_TEST_TIMEOUT } from './cli-helpers';

// Help and usage errors open no database: the same on both stores, so the PostgreSQL pass leaves them out (a minute of CLI runs at load 12).
describe.skipIf(onPostgres)('cli usage', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('prints help for the program and every command, exit code 0', async () => {
    const cases: [string[], RegExp][] = [
      [['--help'], /^Usage: cli <command> \[options\][\s\S]*import[\s\S]*export[\s\S]*keys/],
      [['import', '--help'], /^Usage: cli import \[options\] <file>[\s\S]*--emit-events[\s\S]*--data-dir <dir>/],
      [['export', '--help'], /^Usage: cli export \[options\] <file>[\s\S]*--include-unlisted[\s\S]*--data-dir <dir>/],
      [['keys', '--help'], /^Usage: cli keys[\s\S]*create[\s\S]*list[\s\S]*revoke/],
      [['keys', 'create', '--help'], /^Usage: cli keys create \[options\][\s\S]*--name <name>[\s\S]*--data-dir <dir>/],
      [['help', 'import'], /^Usage: cli import/],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args)));
    results.forEach((result, i) => {
      expect(result.code, cases[i]![0].join(' ')).toBe(0);
      expect(result.stdout).toMatch(cases[i]![1]);
    });
  });

  it('treats unknown commands, unknown options and missing arguments as usage errors, exit code 2', async () => {
    const [unknownCommand, noCommand, unknownOption, missingFile, extraArgument, keysAlone] = await Promise.all([
      runCli(['frobnicate']),
      runCli([]),
      runCli(['export', '-', '--colour']),
      runCli(['import']),
      runCli(['keys', 'list', 'extra']),
      runCli(['keys']),
    ]);
    expect(unknownCommand.code).toBe(2);
    expect(unknownCommand.stderr).toContain("error: unknown command 'frobnicate'");
    expect(noCommand.code).toBe(2);
    expect(noCommand.stderr).toContain('Usage: cli <command> [options]');
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.stderr).toContain("error: unknown option '--colour'");
    expect(missingFile.code).toBe(2);
    expect(missingFile.stderr).toContain("error: missing required argument 'file'");
    expect(extraArgument.code).toBe(2);
    expect(extraArgument.stderr).toContain('error: too many arguments');
    expect(keysAlone.code).toBe(2);
    expect(keysAlone.stderr).toContain('Usage: cli keys');
    for (const result of [unknownCommand, noCommand, unknownOption, missingFile, extraArgument, keysAlone]) {
      expect(result.stdout).toBe('');
      expect(result.stderr).not.toMatch(/^\s+at /m);
    }
  });
});
