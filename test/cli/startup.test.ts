import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { programFor } from '../../src/cli/commands.js';
import { buildProgram } from '../../src/cli/program.js';
import { runCli } from '../helpers/cli.js';
import { withoutNpm } from './fixtures.js';

const topLevel = (program: Command): string[] => program.commands.map((c) => c.name());
const argv = (...words: string[]) => ['node', 'depotkit', ...words];

describe('the CLI loads only the command it runs', () => {
  it('builds only the invoked top-level command, by name or alias, and for help on it', async () => {
    expect(topLevel(await programFor(argv('cert', 'inspect', 'x.pem')))).toEqual(['cert']);
    expect(topLevel(await programFor(argv('--json', 'check', 'https://depot/')))).toEqual(['check']);
    expect(topLevel(await programFor(argv('vcenter', 'replace-cert')))).toEqual(['vcenter']);
    expect(topLevel(await programFor(argv('help', 'serve')))).toEqual(['serve']);
    // move-ca hangs under depot: the depot tree is whole.
    const depot = (await programFor(argv('depot', 'verify', 'd'))).commands[0]!;
    expect(depot.commands.map((c) => c.name())).toEqual((await buildProgram()).commands[0]!.commands.map((c) => c.name()));
    expect(topLevel(await programFor(argv('--version')))).toEqual([]);
  });

  it('builds every command, in the order of the whole program, for the top-level help and a word that is no command', async () => {
    const every = topLevel(await buildProgram());
    expect(every.length).toBeGreaterThan(8);
    expect(topLevel(await programFor(argv()))).toEqual(every);
    expect(topLevel(await programFor(argv('--help')))).toEqual(every);
    expect(topLevel(await programFor(argv('help')))).toEqual(every);
    expect(topLevel(await programFor(argv('verify', 'd')))).toEqual(every);
  });

  it('lists every command in the built CLI top-level help, and suggests the command a typo meant', async () => {
    const help = await runCli(['--help'], { env: withoutNpm() });
    for (const name of topLevel(await buildProgram())) expect(help.stdout).toContain(`  ${name}`);
    const typo = await runCli(['serv'], { env: withoutNpm() });
    expect(typo.stderr).toContain('did you mean serve');
  });
});
