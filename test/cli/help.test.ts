import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { INSTALLER_DEFAULTS } from '../../src/installer/defaults.js';
import { runCli } from '../helpers/cli.js';
import { withoutNpm } from './fixtures.js';
import { runMain } from './in-process.js';

/** Every command, the program itself first, with its full name. */
function walk(cmd: Command, prefix = ''): Array<{ name: string; cmd: Command }> {
  const name = `${prefix} ${cmd.name()}`.trim();
  return [{ name, cmd }, ...cmd.commands.flatMap((c) => walk(c, name))];
}

const run = (args: string[]) => runCli(args, { env: withoutNpm() });
/** The CLI's main in this process: the built CLI answers one unknown command below, and --help in names.test.ts. */
const main = (args: string[]) => runMain(args, withoutNpm());

const whole = await buildProgram();

describe('help that reads clean', () => {
  const commands = walk(whole);

  it('shows no empty default, one default per option, and marks required options', () => {
    expect(commands.length).toBeGreaterThan(25);
    for (const { name, cmd } of commands) {
      const text = cmd.helpInformation();
      expect(text, name).not.toContain('(default: [])');
      expect(text, name).not.toContain('(default: {})');
      const help = cmd.createHelp();
      for (const option of help.visibleOptions(cmd)) {
        const line = help.optionDescription(option);
        expect(line.match(/\bdefault\b/g)?.length ?? 0, `${name} ${option.flags}: ${line}`).toBeLessThanOrEqual(1);
        if (option.mandatory) expect(line, `${name} ${option.flags}`).toMatch(/\(required\)$/);
      }
    }
  });

  it('names the volume preset, the sync by default, and what sim installer does without a password', () => {
    const find = (name: string) => commands.find((c) => c.name === name)!.cmd;
    const line = (name: string, long: string) => {
      const cmd = find(name);
      const help = cmd.createHelp();
      return help.optionDescription(cmd.options.find((o) => o.long === long)!);
    };
    expect(line('depotkit depot pack', '--volume-size')).toMatch(/\(default: fat32\)$/);
    expect(line('depotkit serve', '--workers')).toBe('server processes (default: one per core beyond the first, at least 1)');
    expect(line('depotkit installer connect-depot', '--no-sync')).toContain(`by default it does, waiting up to ${INSTALLER_DEFAULTS.syncTimeoutMs / 1000} s`);
    expect(line('depotkit sim installer', '--password-env')).toContain('the lab password in the README, never asked for');
    expect(line('depotkit sim installer', '--password-env')).not.toContain('terminal');
    // A group's summary is all that the top-level help shows of it: it names every command of the group.
    const depot = find('depotkit depot');
    const named = (words: string) => words.split('-').every((word) => depot.description().toLowerCase().includes(word));
    expect(depot.commands.map((c) => c.name()).filter((name) => name !== 'help' && !named(name))).toEqual([]);
  });

  it("keeps each top-level command's description to one short line, and serve's help states its own default port", async () => {
    for (const cmd of whole.commands) expect(cmd.description().length, `${cmd.name()}: ${cmd.description()}`).toBeLessThanOrEqual(80);
    const serve = await main(['serve', '--help']);
    expect(serve.stdout.replace(/\s+/g, ' ')).toMatch(/--port <n> port to listen on [^-]*\(default: 8443\)/);
    expect(serve.stdout).not.toMatch(/\b443\b/);
  });

  it('lists the commands in the order of the flow, and says so', () => {
    const program = whole;
    expect(program.commands.map((c) => c.name())).toEqual(['depot', 'esx', 'cert', 'serve', 'check', 'installer', 'vcenter', 'export', 'sim', 'quickstart']);
    expect(program.description()).toContain('in the order of the flow');
  });

  it('suggests the command meant when it lives in another group, and answers -v with the version', async () => {
    const verify = await run(['verify', 'x']);
    expect(verify.code).toBe(2);
    expect(verify.stderr).toContain('(did you mean depotkit depot verify?)');
    // One at a time: each captures this process's output while it runs.
    const push = await main(['installer', 'push']);
    const version = await main(['version']);
    const v = await main(['-v']);
    expect(push.stderr).toContain('(did you mean depotkit installer connect-depot or depotkit installer trust?)');
    expect(version.stderr).toContain('(did you mean depotkit --version?)');
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });
});
