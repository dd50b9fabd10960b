import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The suite's two tiers, told apart by what a test file brings in, so that a new file cannot land in the
 * wrong one unnoticed: the quick tier (`npm run test:quick`) is every test file that, with the test/
 * modules it imports, spawns no process and needs no build: no built CLI (helpers/cli.ts, dist/), no peer
 * (nginx, Apache, Caddy, Java, openssl, the browser: each run through node:child_process or
 * playwright-core). The whole suite (`npm test`) runs every file, these included.
 */

const TEST_DIR = resolve(import.meta.dirname, '..');

/** Modules that spawn only node itself for a moment (a pid that has ended): no peer, no built CLI. */
const SPAWNS_NODE_ONLY = new Set(['helpers/process.ts']);

/** What makes a module belong to the whole suite only, each with a word for why. */
const NEEDS: [RegExp, string][] = [
  [/^import(?! type)[^;]*from '(node:)?child_process'/m, 'spawns a process'],
  [/^import(?! type)[^;]*from 'playwright-core'/m, 'runs a browser'],
  [/['/]dist['/]/, 'needs the build'],
];

const SPECIFIER = /^(?:import|export)(?! type)[^;]*?from '(\.[^']+)'|import\('(\.[^']+)'\)/gm;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return testFiles(path);
    return e.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The test/ modules `file` imports (not src/: the library under test runs in-process). */
function localImports(file: string, text: string): string[] {
  return (
    [...text.matchAll(SPECIFIER)]
      .map((m) => resolve(dirname(file), (m[1] ?? m[2])!.replace(/\.js$/, '.ts')))
      // A specifier in a string a test writes out names no module here.
      .filter((path) => path.startsWith(`${TEST_DIR}/`) && existsSync(path))
  );
}

/** Why `file` (a path under test/) is for the whole suite only, through what it imports; undefined: it is quick. */
export function slowBecause(file: string, seen = new Set<string>()): string | undefined {
  if (seen.has(file)) return undefined;
  seen.add(file);
  const name = relative(TEST_DIR, file);
  const text = readFileSync(file, 'utf8');
  if (!SPAWNS_NODE_ONLY.has(name)) {
    for (const [pattern, why] of NEEDS) if (pattern.test(text)) return `${name} ${why}`;
  }
  for (const path of localImports(file, text)) {
    const why = slowBecause(path, seen);
    if (why !== undefined) return why;
  }
  return undefined;
}

/** The test files of the quick tier, as paths relative to the repository. */
export function quickTier(): string[] {
  return testFiles(TEST_DIR)
    .filter((file) => slowBecause(file) === undefined)
    .map((file) => relative(dirname(TEST_DIR), file))
    .sort();
}

/**
 * The test files that replace a module of the library (`vi.mock`): they need a module graph of their own. Every
 * other file shares its worker's, so that the library is loaded once per worker rather than once per file.
 */
export function ownModules(): string[] {
  return testFiles(TEST_DIR)
    .filter((file) => /\bvi\.mock\(/.test(readFileSync(file, 'utf8')))
    .map((file) => relative(dirname(TEST_DIR), file))
    .sort();
}
