import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { runCli } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/temp.js';
import { withoutNpm } from './fixtures.js';
import { runMain } from './in-process.js';

const run = (args: string[]) => runCli(args, { env: withoutNpm() });

const program = await buildProgram();

/** The command the words name, by name or alias, as commander looks it up. */
function lookUp(words: string[]): Command {
  return words.reduce<Command>((cmd, word) => {
    const found = cmd.commands.find((c) => c.name() === word || c.aliases().includes(word));
    expect(found, words.join(' ')).toBeDefined();
    return found!;
  }, program);
}

describe('the names users expect, the first names kept as aliases', () => {
  const pairs: Array<[string[], string[]]> = [
    [['quickstart'], ['start']],
    [['vcenter'], ['mgmt']],
    [
      ['vcenter', 'replace-cert'],
      ['mgmt', 'replace-cert'],
    ],
    [
      ['sim', 'vcenter'],
      ['sim', 'mgmt'],
    ],
    [
      ['installer', 'connect-depot'],
      ['installer', 'depot'],
    ],
  ];

  // The lookup and the help text in this process; the built CLI's --help by both names once, below.
  it.each(pairs)('%j answers as its alias does, under its new name', (name, alias) => {
    const cmd = lookUp(name);
    expect(lookUp(alias)).toBe(cmd);
    const aliased = name.at(-1) === alias.at(-1) ? '' : `|${alias.at(-1)}`;
    expect(cmd.helpInformation()).toContain(`Usage: depotkit ${name.join(' ')}${aliased} `);
  });

  it('prints the same help by both names from the built CLI', async () => {
    const [byName, byAlias] = await Promise.all([run(['installer', 'connect-depot', '--help']), run(['installer', 'depot', '--help'])]);
    expect(byName.code).toBe(0);
    expect(byAlias.code).toBe(0);
    expect(byAlias.stdout).toBe(byName.stdout);
    expect(byName.stdout).toContain('Usage: depotkit installer connect-depot|depot ');
  });

  it('runs installer connect-depot by both names', async () => {
    const given = ['--installer', 'https://127.0.0.1:1', '--password-env', 'NONE'];
    // The built CLI by the old name, the CLI's main in this process by the new one.
    for (const said of [await run(['installer', 'depot', ...given]), await runMain(['installer', 'connect-depot', ...given], withoutNpm())]) {
      expect(said.code).toBe(2);
      expect(said.stderr).toContain('Give the depot with --depot-url, or with --depot-host');
    }
  });

  it('lists the new names in the top-level help, and npm start runs quickstart', async () => {
    const help = (await run(['--help'])).stdout;
    expect(help).toMatch(/^ {2}quickstart\|start /m);
    expect(help).toMatch(/^ {2}vcenter\|mgmt /m);
    expect(help).not.toMatch(/^ {2}mgmt /m);
    const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toBe('node dist/cli/main.js quickstart');
  });
});
