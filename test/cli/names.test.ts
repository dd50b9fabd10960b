import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/temp.js';
import { withoutNpm } from './fixtures.js';

const run = (args: string[]) => runCli(args, { env: withoutNpm() });

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

  it.each(pairs)('%j answers as its alias does, under its new name', async (name, alias) => {
    const [byName, byAlias] = await Promise.all([run([...name, '--help']), run([...alias, '--help'])]);
    expect(byName.code).toBe(0);
    expect(byAlias.code).toBe(0);
    expect(byAlias.stdout).toBe(byName.stdout);
    const aliased = name.at(-1) === alias.at(-1) ? '' : `|${alias.at(-1)}`;
    expect(byName.stdout).toContain(`Usage: depotkit ${name.join(' ')}${aliased} `);
  });

  it('runs installer connect-depot by both names', async () => {
    const given = ['--installer', 'https://127.0.0.1:1', '--password-env', 'NONE'];
    for (const said of await Promise.all([run(['installer', 'connect-depot', ...given]), run(['installer', 'depot', ...given])])) {
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
