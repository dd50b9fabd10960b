import { readFile } from 'node:fs/promises';
import fg from 'fast-glob';
import { describe, expect, it } from 'vitest';
import { MGMT_API, MGMT_ERROR_TYPES, MGMT_HEADERS, MGMT_TLS_KEY_FIELD } from '../../src/constants.js';

/** The management server's wire literals live in src/constants.ts only; its code names them through the constants. */
const FOLDERS = ['src/vcenter/**/*.ts', 'src/simulators/vcenter/**/*.ts', 'src/cli/vcenter.ts'];

async function sources(): Promise<Map<string, string>> {
  const files = await fg(FOLDERS);
  return new Map(await Promise.all(files.map(async (f) => [f, withoutComments(await readFile(f, 'utf8'))] as const)));
}

/** Comments may name the fields; only code counts. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

/** The text of every quoted string literal (', ", `) in a source. */
function stringLiterals(text: string): string[] {
  return [...text.matchAll(/'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

describe('management server literals', () => {
  it('spells no API path, path prefix, header or the key field outside src/constants.ts', async () => {
    const paths = Object.values(MGMT_API).flatMap((g) => Object.values(g));
    const prefixes = paths.map((p) => `/${p.split('/')[1]}/`);
    const forbidden = new Set<string>([...paths, ...prefixes, ...Object.values(MGMT_HEADERS), MGMT_TLS_KEY_FIELD]);
    const found: string[] = [];
    for (const [file, text] of await sources()) {
      for (const literal of stringLiterals(text))
        if (forbidden.has(literal) || prefixes.some((p) => literal.startsWith(p))) found.push(`${file}: '${literal}'`);
      // The key field as a property name of a replace request (the simulator's own TLS key is another matter).
      for (const m of text.matchAll(/[{,]\s*key\??:(?!\s*state\.current\.keyPem)/g)) found.push(`${file}: ${m[0].trim()}`);
    }
    expect(found).toEqual([]);
  });

  it('keeps only error types that some code uses', async () => {
    const all = [...(await sources()).values()].join('\n');
    const unused = Object.keys(MGMT_ERROR_TYPES).filter((name) => !all.includes(`MGMT_ERROR_TYPES.${name}`));
    expect(unused).toEqual([]);
  });
});
