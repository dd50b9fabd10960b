// What the two bundles of the CLI (the single executable's, scripts/package.ts, and dist/cli's,
// scripts/build/cli-bundle.ts) make of the sources' requires relative to their own file.
import { readFile } from 'node:fs/promises';
import type { Plugin } from 'esbuild';

/** A require relative to the source file, spelt so in src/ (the package.json the CLI takes its version from, lazy packages). */
export const RELATIVE_REQUIRE = 'createRequire(import.meta.url)(';
/** A module the code wants as a file on disk (the code a worker thread loads, such as bcryptjs for serve's hash threads). */
export const RESOLVE = 'createRequire(import.meta.url).resolve(';

/**
 * `createRequire(import.meta.url)(name)` becomes `require(name)`, which esbuild follows (or leaves to
 * Node at run time where `name` is external); `createRequire(import.meta.url).resolve(name)` becomes a
 * call of `resolveWith` where given, and stays as it is otherwise (a bundle beside node_modules finds
 * the file as the sources do). `check(path, text)` sees every source file loaded, to refuse one the
 * bundle cannot carry.
 */
export function relativeRequires(options: { resolveWith?: string; check?: (path: string, text: string) => void } = {}): Plugin {
  return {
    name: 'relative-requires',
    setup(b) {
      b.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, async (args) => {
        const text = await readFile(args.path, 'utf8');
        options.check?.(args.path, text);
        const resolved = options.resolveWith === undefined ? text : text.replaceAll(RESOLVE, `${options.resolveWith}(`);
        return { contents: resolved.replaceAll(RELATIVE_REQUIRE, 'require('), loader: 'ts' };
      });
    },
  };
}
