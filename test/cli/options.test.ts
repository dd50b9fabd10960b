import { join } from 'node:path';
import type { Command, Option } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { INSTALLER_DEFAULTS } from '../../src/installer/defaults.js';
import { SERVER_PROFILE } from '../../src/cert/profiles.js';
import { CHECK_DEFAULTS } from '../../src/check/defaults.js';
import { SERVE_DEFAULT_GRACE_SECONDS, SERVE_DEFAULT_PORT } from '../../src/server/tuning.js';
import { MIRROR_DEFAULTS } from '../../src/transfer/defaults.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { makeFixture, withoutNpm, type CliFixture } from './fixtures.js';
import { runMain } from './in-process.js';

/** Every command that runs something (no subcommands), with its full name. */
function leaves(cmd: Command, prefix = ''): Array<{ name: string; cmd: Command }> {
  const name = `${prefix} ${cmd.name()}`.trim();
  if (cmd.commands.length === 0) return [{ name, cmd }];
  return cmd.commands.flatMap((c) => leaves(c, cmd.parent ? name : ''));
}

const option = (cmd: Command, long: string): Option | undefined => cmd.options.find((o) => o.long === long);

const program = await buildProgram();

describe("the option table: one spelling, one parser, the libraries' defaults", () => {
  const commands = leaves(program);
  const find = (name: string) => commands.find((c) => c.name === name)!.cmd;

  it('gives every command that takes a password the file, the variable and nothing on the command line', () => {
    const withPasswords = commands.filter(({ cmd }) => cmd.options.some((o) => o.long?.endsWith('password-file')));
    expect(withPasswords.map((c) => c.name).sort()).toEqual(
      [
        'check',
        'depot mirror',
        'depot move-ca',
        'esx mirror',
        'export',
        'installer connect-depot',
        'installer download',
        'installer releases',
        'installer sync',
        'installer status',
        'installer trust',
        'vcenter replace-cert',
        'vcenter depot',
        'vcenter trust',
        'serve',
        'sim installer',
        'sim vcenter',
      ].sort(),
    );
    for (const { name, cmd } of commands) {
      for (const o of cmd.options.filter((x) => x.long?.endsWith('password-file'))) {
        const env = o.long!.replace(/-file$/, '-env');
        expect(option(cmd, env), `${name} ${env}`).toBeDefined();
        // The two exclude each other: commander refuses both at once.
        expect((o as Option & { conflictsWith: string[] }).conflictsWith, `${name} ${o.long}`).toContain(
          env.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()),
        );
      }
      expect(
        cmd.options.filter((o) => /password$/.test(o.long ?? '')),
        name,
      ).toEqual([]);
    }
  });

  it('takes --timeout in seconds, a CA file or folder for --ca where it is trusted, and refuses --concurrency 0', () => {
    for (const { name, cmd } of commands) {
      const timeout = option(cmd, '--timeout');
      if (timeout) expect(timeout.flags, name).toBe('--timeout <seconds>');
      const concurrency = option(cmd, '--concurrency');
      if (concurrency) {
        expect(() => concurrency.parseArg!('0', undefined), name).toThrow('--concurrency must be at least 1.');
        expect(concurrency.parseArg!('3', undefined)).toBe(3);
      }
    }
    for (const name of ['check', 'cert inspect', 'depot mirror', 'installer trust']) expect(option(find(name), '--ca')!.flags, name).toBe('--ca <file-or-dir>');
    expect(option(find('vcenter replace-cert'), '--server-ca')!.flags).toBe('--server-ca <file-or-dir>');
    expect(option(find('installer connect-depot'), '--trust-ca')!.flags).toBe('--trust-ca <file-or-dir>');
    // A CA that signs must be a folder with its key.
    for (const name of ['cert issue', 'cert sign-csr', 'serve', 'export']) expect(option(find(name), '--ca')!.flags, name).toBe('--ca <dir>');
  });

  it("shows the libraries' own defaults", () => {
    expect(option(find('check'), '--timeout')!.defaultValue).toBe(CHECK_DEFAULTS.timeoutMs / 1000);
    expect(option(find('check'), '--concurrency')!.defaultValue).toBe(CHECK_DEFAULTS.concurrency);
    expect(option(find('installer status'), '--timeout')!.defaultValue).toBe(INSTALLER_DEFAULTS.timeoutMs / 1000);
    expect(option(find('installer status'), '--concurrency')!.defaultValue).toBe(INSTALLER_DEFAULTS.concurrency);
    expect(option(find('installer connect-depot'), '--sync-timeout')!.defaultValue).toBe(INSTALLER_DEFAULTS.syncTimeoutMs / 1000);
    expect(option(find('depot mirror'), '--timeout')!.defaultValue).toBe(MIRROR_DEFAULTS.timeoutMs / 1000);
    expect(option(find('depot mirror'), '--concurrency')!.defaultValue).toBe(MIRROR_DEFAULTS.concurrency);
    expect(option(find('serve'), '--port')!.defaultValue).toBe(SERVE_DEFAULT_PORT);
    expect(option(find('quickstart'), '--port')!.defaultValue).toBe(SERVE_DEFAULT_PORT);
    expect(option(find('serve'), '--grace')!.defaultValue).toBe(SERVE_DEFAULT_GRACE_SECONDS);
    expect(option(find('cert issue'), '--key-size')!.defaultValue).toBe(String(SERVER_PROFILE.key.bits));
    expect(option(find('cert issue'), '--days')!.defaultValue).toBe(SERVER_PROFILE.validity.days);
  });
});

describe('usage errors (the built CLI)', () => {
  let cleanup: () => Promise<void>;
  let f: CliFixture;
  beforeAll(async () => {
    const t = await tempDir('depotkit-cli-usage-');
    cleanup = t.cleanup;
    f = await makeFixture(t.dir);
  });
  afterAll(async () => cleanup?.());

  const run = (args: string[]) => runCli(args, { env: withoutNpm() });
  /** The same main in this process: what it prints and returns (the built CLI's runs above and below show it is the process's). */
  const main = (args: string[]) => runMain(args, withoutNpm());

  it("says one sentence and the command's usage line, not the whole help", async () => {
    const cases: Array<[string[], string, string]> = [
      [['check', 'https://x.invalid', '--concurrency', '0'], '--concurrency must be at least 1.', 'depotkit check [options] <depot-url>'],
      [['check', 'https://x.invalid', '--timeout', '10ms'], '--timeout takes a whole number, not "10ms".', 'depotkit check [options] <depot-url>'],
      [['depot', 'demo', 'x', '--release', '8.0'], '--release must be one of 9.0, 9.1, not "8.0".', 'depotkit depot demo [options] <dir>'],
      [
        ['serve', f.depot, '--http', '--user', 'u'],
        'Give --http or --user, not both: Basic auth over plain HTTP would send the password in clear text.',
        'depotkit serve [options] <dir>',
      ],
      [
        ['serve', f.depot, '--cert', f.chainFile, '--ca', f.caDir],
        'Give --cert or --ca, not both: --ca issues the certificate that --cert would give.',
        'depotkit serve [options] <dir>',
      ],
      [
        ['check', 'https://x.invalid', '--user', 'u', '--password-file', f.passwordFile, '--password-env', 'X'],
        'Give --password-file or --password-env, not both.',
        'depotkit check [options] <depot-url>',
      ],
      [['cert', 'issue', '--dns', 'x.lab', '--out', 'x'], '--ca is required.', 'depotkit cert issue [options]'],
      [
        ['cert', 'inspect', f.chainFile, '--hots', 'x'],
        'depotkit cert inspect has no option --hots (did you mean --host?).',
        'depotkit cert inspect [options] <pem>',
      ],
      [['depot', 'verify'], 'The <dir> argument is missing.', 'depotkit depot verify [options] <dir>'],
    ];
    // The built CLI for a parse error and for serve (which listens for signals as it starts); main in this process for the rest.
    for (const [i, [args, sentence, usage]] of cases.entries()) {
      const r = await (i === 0 || args[0] === 'serve' ? run : main)(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toBe(`depotkit: ${sentence}\nusage: ${usage}\n`);
      expect(r.stdout).toBe('');
    }
  });

  it('answers --password (a common guess) with the options that take a password, never echoing it', async () => {
    const r = await run(['serve', f.depot, '--user', 'depot', '--password', 'hunter2']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("depotkit: --password is not an option: a password on the command line would show in ps and in the shell's history.");
    expect(r.stderr).toContain('Use --password-file <file> or --password-env <name>, or give neither to be asked on a terminal.');
    expect(r.stderr).not.toContain('hunter2');
    const depot = await main(['installer', 'depot', '--installer', 'https://installer.invalid', '--depot-password=hunter2']);
    expect(depot.code).toBe(2);
    expect(depot.stderr).toContain('Use --depot-password-file <file> or --depot-password-env <name>');
    expect(depot.stderr).not.toContain('hunter2');
  });

  it('with --json, every error is a JSON object on stdout too, with its exit code and fix', async () => {
    const usage = await run(['check', 'https://x.invalid', '--concurrency', '0', '--json']);
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stdout)).toEqual({
      error: { message: '--concurrency must be at least 1.', exitCode: 2, fix: 'usage: depotkit check [options] <depot-url>' },
    });
    expect(usage.stderr).toContain('depotkit: --concurrency must be at least 1.');
    const input = await main(['depot', 'verify', join(f.dir, 'depoy'), '--json']);
    expect(input.code).toBe(2);
    expect(JSON.parse(input.stdout)).toEqual({ error: { message: `${join(f.dir, 'depoy')} does not exist.`, exitCode: 2, fix: `Did you mean ${f.depot}?` } });
    const password = await main(['check', 'https://x.invalid', '--user', 'u', '--json']);
    expect(password.code).toBe(2);
    expect(JSON.parse(password.stdout).error).toEqual({
      message: 'The password of depot user u is needed and there is no terminal to ask on.',
      exitCode: 2,
      fix: 'Pass --password-file <file> or --password-env <name>.',
    });
  });
});
