import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Command } from 'commander';
import type { Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { programFor } from '../../src/cli/commands.js';
import { buildProgram } from '../../src/cli/program.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { customCa } from '../helpers/certs.js';
import { CLI, runCli } from '../helpers/cli.js';
import { REPO_ROOT, tempDir } from '../helpers/temp.js';
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

/**
 * Records every file the process loads: ES modules (the bundle's chunks, a package's ES files) through a
 * resolve hook, CommonJS ones (a package the bundle leaves to Node, its own requires) from require's cache at exit.
 */
const RECORDER = {
  'hook.mjs': `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (r.url.startsWith('file:')) appendFileSync(process.env.LOADED_LOG, r.url + '\\n');
  return r;
}`,
  'record.mjs': `import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
register('./hook.mjs', import.meta.url);
const cache = createRequire(import.meta.url)('module')._cache;
process.on('exit', () => appendFileSync(process.env.LOADED_LOG, Object.keys(cache).join('\\n') + '\\n'));`,
};

/** The built CLI is esbuild's bundle: the files of node_modules inside each of its output files, from the metafile the build writes. */
async function bundleInputs(): Promise<Map<string, string[]>> {
  const meta = JSON.parse(await readFile(join(REPO_ROOT, 'dist', 'cli', 'meta.json'), 'utf8')) as Metafile;
  return new Map(
    Object.entries(meta.outputs).map(([output, { inputs }]) => [resolve(REPO_ROOT, output), Object.keys(inputs).map((i) => resolve(REPO_ROOT, i))]),
  );
}

/** The packages of node_modules the built CLI loads for `args`, inside the bundle's chunks or from node_modules (it may fail: what it loads to start is what counts). */
async function packagesLoaded(dir: string, name: string, args: string[]): Promise<string[]> {
  const log = join(dir, `${name}.log`);
  await writeFile(log, '');
  await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', pathToFileURL(join(dir, 'record.mjs')).href, CLI, ...args], {
      env: { ...process.env, LOADED_LOG: log },
      stdio: 'ignore',
    });
    child.on('error', reject).on('close', resolve);
  });
  const loaded = (await readFile(log, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((f) => (f.startsWith('file:') ? fileURLToPath(f) : f));
  const bundle = await bundleInputs();
  const ofCli = loaded.filter((f) => dirname(f) === dirname(CLI));
  // tsc alone (no bundle step) leaves its own main.js: what would be measured is not what ships.
  expect(
    ofCli.filter((f) => !bundle.has(f)),
    `${name}: files of dist/cli/ that are not the bundle's (npm run build writes it)`,
  ).toEqual([]);
  const files = [...ofCli.flatMap((f) => bundle.get(f)!), ...loaded].filter((f) => f.includes('/node_modules/'));
  // node-forge's ASN.1 reader alone is a few files of its lib, undici's HTTP core a few of its; the whole of each is its index.
  const whole: Record<string, string> = { '/node-forge/lib/index.js': 'node-forge (whole)', '/undici/index.js': 'undici (whole)' };
  const packageOf = (f: string) => Object.entries(whole).find(([index]) => f.includes(index))?.[1] ?? /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f)![1]!;
  return [...new Set(files.map(packageOf))];
}

describe('a command run in a loop loads only the packages it uses', () => {
  it('loads no node-forge for inspect, check and installer status, no undici index, no schema compiler or glob package, and no YAML, JWT, prompt or progress-bar package', async () => {
    const { dir, cleanup } = await tempDir('depotkit-startup-');
    try {
      for (const [file, text] of Object.entries(RECORDER)) await writeFile(join(dir, file), text);
      await writeFile(join(dir, 'cert.pem'), customCa().certPem);
      await writeFile(join(dir, 'password'), 'secret\n');
      await makeDemoDepot(join(dir, 'depot'), { binarySize: 1 });
      const unused = ['node-forge (whole)', 'undici (whole)', 'yaml', 'jose', 'read', 'cli-progress', 'fast-glob', 'ajv'];
      const commands: Record<string, string[]> = {
        version: ['--version'],
        'cert inspect': ['cert', 'inspect', join(dir, 'cert.pem')],
        // Nothing listens on port 1: the command fails once it has loaded what it runs on.
        check: ['check', 'https://127.0.0.1:1/', '--timeout', '2'],
        'installer status': ['installer', 'status', '--installer', 'https://127.0.0.1:1', '--insecure', '--password-file', join(dir, 'password')],
        // A whole depot: verify validates its catalog, HCL and signature.
        'depot verify': ['depot', 'verify', join(dir, 'depot')],
      };
      const loadedBy: Record<string, string[]> = {};
      for (const [name, args] of Object.entries(commands)) {
        const loaded = (loadedBy[name] = await packagesLoaded(dir, name.replace(' ', '-'), args));
        expect(loaded, name).toContain('commander');
        expect(
          loaded.filter((p) => unused.includes(p)),
          name,
        ).toEqual([]);
      }
      // The certificate reader reads the DER itself: inspection loads no part of node-forge; the installer's client speaks HTTPS with Node's own client.
      expect(loadedBy['cert inspect']).not.toContain('node-forge');
      expect(loadedBy['installer status']).not.toContain('undici');
    } finally {
      await cleanup();
    }
  });
});
