import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkFloors, type ViolationKind } from '../../scripts/arch/floors.js';
import { MAX_FILE_LINES, MAX_FUNCTION_LINES, measure } from '../../scripts/arch/shape.js';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * What src/ still does against the floor plan: nothing today. An entry may be added only with the move that
 * takes it away again; the list must only shrink (an entry that no longer holds fails the test too).
 */
const NOT_YET: string[] = [];

describe('the floor plan of docs/architecture.md', () => {
  it('holds for src/ but for what is listed as not yet moved', () => {
    const found = checkFloors(ROOT).map((v) => `${v.kind}: ${v.what}`);
    expect(
      found.filter((v) => !NOT_YET.includes(v)),
      'new violations',
    ).toEqual([]);
    expect(
      NOT_YET.filter((v) => !found.includes(v)),
      'listed but no longer found: take them off the list',
    ).toEqual([]);
  });

  it('holds for the shape caps', () => {
    const shape = measure(ROOT);
    expect(shape.longFiles).toEqual([]);
    expect(shape.longFunctions).toEqual([]);
    expect(shape.floorFiveImports).toEqual([]);
  });
});

describe('the floors check fails on a planted violation', () => {
  const trees: string[] = [];
  afterAll(() => trees.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  /** A small tree: constants, util and depot that keep the plan, plus the files given. */
  function tree(files: Record<string, string>): string {
    const root = mkdtempSync(join(tmpdir(), 'depotkit-floors-'));
    trees.push(root);
    const all: Record<string, string> = {
      'src/constants.ts': 'export const A = 1;\n',
      'src/util/a.ts': "import { A } from '../constants.js';\nexport const B = A;\n",
      'src/depot/d.ts': "import { B } from '../util/a.js';\nexport const D = B;\n",
      ...files,
    };
    for (const [path, text] of Object.entries(all)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    return root;
  }
  const kinds = (root: string): ViolationKind[] => checkFloors(root).map((v) => v.kind);

  it('passes the planted tree without the violation', () => {
    expect(checkFloors(tree({}))).toEqual([]);
  });

  it('an import up a floor', () => {
    expect(kinds(tree({ 'src/util/up.ts': "export { D } from '../depot/d.js';\n" }))).toEqual(['up-a-floor']);
  });

  it('an import between two floor-3 folders that the table keeps apart', () => {
    expect(kinds(tree({ 'src/cert/p.ts': "import { D } from '../depot/d.js';\nexport const P = D;\n" }))).toEqual(['up-a-floor']);
  });

  it('an import between floor-5 folders, a dynamic one too', () => {
    const root = tree({
      'src/transfer/t.ts': 'export const T = 1;\n',
      'src/check/p.ts': "export async function p() { return (await import('../transfer/t.js')).T; }\n",
    });
    expect(kinds(root)).toEqual(['floor-5']);
  });

  it('a cycle made of type-only imports', () => {
    const root = tree({
      'src/util/x.ts': "import type { Y } from './y.js';\nexport interface X { y?: Y }\n",
      'src/util/y.ts': "import type { X } from './x.js';\nexport interface Y { x?: X }\n",
    });
    expect(checkFloors(root)).toEqual([{ kind: 'cycle', what: 'util/x.ts <-> util/y.ts' }]);
  });

  it('X509Certificate, node:tls, node:https and undici outside their owners', () => {
    const root = tree({
      'src/depot/cert.ts': "import { X509Certificate } from 'node:crypto';\nexport const c = (pem: string) => new X509Certificate(pem);\n",
      'src/depot/tls.ts': "import { connect } from 'node:tls';\nexport const t = connect;\n",
      'src/depot/https.ts': "import https from 'node:https';\nexport const h = https;\n",
      'src/depot/undici.ts': "export const u = () => import('undici');\n",
    });
    expect(checkFloors(root).map((v) => v.what)).toEqual([
      'depot/cert.ts uses X509Certificate',
      'depot/https.ts uses node:https',
      'depot/tls.ts uses node:tls',
      'depot/undici.ts uses undici',
    ]);
  });

  it('a folder that is in no row', () => {
    expect(kinds(tree({ 'src/extras/e.ts': 'export const E = 1;\n' }))).toEqual(['unknown-folder']);
  });

  it('a file and a function over the shape caps', () => {
    const body = Array.from({ length: MAX_FUNCTION_LINES }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const filler = Array.from({ length: MAX_FILE_LINES }, (_, i) => `export const f${i} = ${i};`).join('\n');
    const shape = measure(tree({ 'src/util/long.ts': `export function long() {\n${body}\n}\n${filler}\n` }));
    expect(shape.longFiles.map((f) => f.file)).toEqual(['src/util/long.ts']);
    expect(shape.longFunctions.map((f) => f.name)).toEqual(['long']);
  });
});
