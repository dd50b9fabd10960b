// Builds the command line as an esbuild bundle, after tsc (npm run build, prepare, npm test): Node's
// ES module loader pays for every file, and `node dist/cli/main.js check` loaded about 70 of dist/
// and commander's and undici's besides. tsc's dist/ stays the library (its JS and types); this
// replaces dist/cli/main.js with the bundle's entry, whose chunks sit beside it as chunk-<hash>.js,
// with serve's worker (worker.js) and esbuild's metafile (meta.json, which test/cli/startup.test.ts
// reads to know the packages inside each chunk).
//
// Code split per command as the sources are: every `await import()` of the CLI (the invoked command,
// prom-client, the terminal prompt) is a chunk a run loads only when it takes that path.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { relativeRequires } from './relative-requires.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const OUT = join(ROOT, 'dist', 'cli');
const SOURCES = join(ROOT, 'src');

/**
 * What the sources load on first use, a package by `await import()` (prom-client, read) or by a require in
 * a function (the whole of node-forge, ajv, yaml, cli-progress), is left to Node at run time, found in
 * node_modules from dist/cli/ as from tsc's files: a command that never calls it never reads it, and Node
 * gives import() a CommonJS package's named exports (a chunk of esbuild's would give its default alone).
 */
const leftToNode: Plugin = {
  name: 'left-to-node',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      const onFirstUse = args.kind === 'dynamic-import' || args.kind === 'require-call';
      if (!onFirstUse || !args.importer.startsWith(SOURCES + sep)) return undefined;
      return { path: args.path, external: true };
    });
  },
};

/** The bundle's own names: chunks, the entries, the metafile. */
const CHUNK = /^chunk-[A-Z0-9]+\.js(\.map)?$/;
const META = 'meta.json';

/**
 * import.meta.url in the bundle names the output file that holds the code, dist/cli/<file>.js: paths
 * made from it (../../package.json, ../../templates/, ./worker.js, a require's node_modules) hold
 * only for a source as deep, src/<folder>/<file>.ts.
 */
function asDeepAsTheBundle(path: string, text: string): void {
  const within = relative(SOURCES, path).split(sep);
  if (within[0] === '..' || !text.includes('import.meta.url')) return;
  if (within.length !== 2) throw new Error(`${relative(ROOT, path)} uses import.meta.url but is not at src/<folder>/<file>.ts, as deep as dist/cli/<file>.js.`);
}

/** A name of the bundle that tsc writes too (a src/cli/<name>.ts) would be overwritten or overwrite: refused. */
function refuseCollisions(names: readonly string[]): void {
  for (const name of names) {
    const stem = name.replace(/\.js(\.map)?$/, '');
    if (stem !== 'main' && existsSync(join(SOURCES, 'cli', `${stem}.ts`)))
      throw new Error(`The bundle's ${name} would take the place of tsc's output of src/cli/${stem}.ts.`);
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  await mkdir(OUT, { recursive: true });
  // In dist/cli/ itself, so that each rename below is one step on one file system.
  const temp = await mkdtemp(join(OUT, '.depotkit-tmp-bundle-'));
  try {
    const result = await build({
      absWorkingDir: ROOT,
      entryPoints: { main: join(SOURCES, 'cli', 'main.ts'), worker: join(SOURCES, 'server', 'worker.ts') },
      outdir: temp,
      chunkNames: 'chunk-[hash]',
      bundle: true,
      splitting: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      // Less for V8 to read at each start (about 2 % of `cert inspect`'s); names are kept, and the source maps lead back.
      minifyWhitespace: true,
      minifySyntax: true,
      sourcemap: 'linked',
      sourcesContent: false,
      metafile: true,
      logLevel: 'warning',
      // The CommonJS code inside (commander, undici, express ...) requires Node's modules, and the
      // packages left to Node are required at run time: a require relative to each output file.
      banner: { js: "import { createRequire as __depotkitCreateRequire } from 'node:module'; const require = __depotkitCreateRequire(import.meta.url);" },
      plugins: [relativeRequires({ check: asDeepAsTheBundle }), leftToNode],
    });
    const names = await readdir(temp);
    refuseCollisions(names);
    const meta = JSON.stringify(result.metafile).replaceAll(`${relative(ROOT, temp)}/`, `${relative(ROOT, OUT)}/`);
    await writeFile(join(temp, META), meta);
    // Chunks first and main.js last: a run started meanwhile finds either the earlier build or this one whole.
    const order = [...names.filter((n) => n !== 'main.js'), META, 'main.js'];
    for (const name of order) await rename(join(temp, name), join(OUT, name));
    // The chunks of earlier builds, which nothing of this one imports.
    for (const name of await readdir(OUT)) if (CHUNK.test(name) && !names.includes(name)) await rm(join(OUT, name));
    const code = Object.entries(result.metafile.outputs).filter(([path]) => path.endsWith('.js'));
    const bytes = code.reduce((sum, [, o]) => sum + o.bytes, 0);
    process.stderr.write(
      `cli-bundle: dist/cli/main.js, worker.js and ${code.length - 2} chunks, ${(bytes / 1048576).toFixed(1)} MiB, ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`cli-bundle: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
