// The floor plan of docs/architecture.md as data, and the checker that holds src/ to it: imports
// only down the floors (or to what a folder's row allows), none between floor-5 folders, no cycle
// (type-only imports count: a type cycle still ties two modules' designs together), and the
// modules that own a platform API (X509Certificate, node:tls, node:https, undici) are the only
// ones to use it. Used by test/architecture/floors.test.ts; by hand: `npx tsx scripts/arch/floors.ts`.
import { existsSync } from 'node:fs';
import { join, relative, dirname, resolve } from 'node:path';
import ts from 'typescript';
import { parsedSource, sourceFiles } from './sources.js';

export interface Room {
  floor: number;
  /** The folder under src/, or `constants` and `index` for the two files at its top. */
  folder: string;
  /** The folders it may import besides itself. */
  mayImport: string[];
}

const BELOW_4 = ['constants', 'util', 'net', 'esx', 'depot', 'cert', 'server', 'installer', 'vcenter'];
const FLOOR_5 = ['check', 'simulators', 'export', 'transfer'];

/** docs/architecture.md's table, row by row. */
export const FLOORS: Room[] = [
  { floor: 1, folder: 'constants', mayImport: [] },
  { floor: 2, folder: 'util', mayImport: ['constants'] },
  { floor: 2, folder: 'net', mayImport: ['constants', 'util'] },
  { floor: 3, folder: 'esx', mayImport: ['constants', 'util'] },
  { floor: 3, folder: 'depot', mayImport: ['constants', 'util', 'esx'] },
  { floor: 3, folder: 'cert', mayImport: ['constants', 'util'] },
  { floor: 4, folder: 'server', mayImport: ['constants', 'util', 'esx', 'depot', 'cert'] },
  { floor: 4, folder: 'installer', mayImport: ['constants', 'util', 'net', 'cert'] },
  { floor: 4, folder: 'vcenter', mayImport: ['constants', 'util', 'net', 'esx', 'cert'] },
  { floor: 5, folder: 'check', mayImport: BELOW_4 },
  { floor: 5, folder: 'simulators', mayImport: BELOW_4.filter((f) => f !== 'installer') },
  { floor: 5, folder: 'export', mayImport: BELOW_4 },
  { floor: 5, folder: 'transfer', mayImport: BELOW_4 },
  { floor: 6, folder: 'procedures', mayImport: [...BELOW_4, ...FLOOR_5] },
  { floor: 7, folder: 'cli', mayImport: [...BELOW_4, ...FLOOR_5, 'procedures', 'index'] },
  { floor: 7, folder: 'index', mayImport: [...BELOW_4, ...FLOOR_5, 'procedures'] },
];

/** Platform APIs each owned by the modules named (paths under src/, a folder ending in `/`). */
export const OWNERS: Record<string, string[]> = {
  X509Certificate: ['cert/'],
  'node:tls': ['net/', 'server/', 'simulators/installer/index.ts', 'simulators/vcenter/index.ts'],
  'node:https': ['net/', 'server/', 'simulators/installer/index.ts', 'simulators/vcenter/index.ts'],
  undici: ['net/'],
};

export type ViolationKind = 'unknown-folder' | 'up-a-floor' | 'floor-5' | 'cycle' | 'owner';

export interface Violation {
  kind: ViolationKind;
  /** One line naming the files involved, stable from run to run. */
  what: string;
}

interface SourceFile {
  rel: string;
  imports: string[];
  apis: string[];
}

/** src/-relative path of a relative import, `.js` written for the `.ts` beside it. */
function resolveImport(srcDir: string, from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec);
  for (const candidate of [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')]) {
    if (existsSync(candidate)) return relative(srcDir, candidate);
  }
  return undefined;
}

function read(srcDir: string, path: string): SourceFile {
  const { file } = parsedSource(path);
  const imports = new Set<string>();
  const apis = new Set<string>();
  const spec = (literal: ts.Expression | undefined): void => {
    if (!literal || !ts.isStringLiteral(literal)) return;
    const name = literal.text;
    if (name === 'node:tls' || name === 'tls') apis.add('node:tls');
    else if (name === 'node:https' || name === 'https') apis.add('node:https');
    else if (name === 'undici' || name.startsWith('undici/')) apis.add('undici');
    else if (name.startsWith('.')) {
      const target = resolveImport(srcDir, path, name);
      if (target) imports.add(target);
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) spec(node.moduleSpecifier);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) spec(node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) spec(node.argument.literal as ts.Expression);
    else if (ts.isIdentifier(node) && node.text === 'X509Certificate') apis.add('X509Certificate');
    ts.forEachChild(node, visit);
  };
  visit(file);
  return { rel: relative(srcDir, path), imports: [...imports].sort(), apis: [...apis].sort() };
}

function folderOf(rel: string): string {
  if (!rel.includes('/')) return rel.replace(/\.ts$/, '');
  return rel.split('/')[0];
}

function owns(rel: string, owners: string[]): boolean {
  return owners.some((owner) => (owner.endsWith('/') ? rel.startsWith(owner) : rel === owner));
}

/** Every cycle of the import graph, each once, as its files from the smallest name round. */
function cycles(files: Map<string, string[]>): string[][] {
  // Tarjan's strongly connected components; a component of more than one file holds a cycle.
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (v: string): void => {
    order.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of files.get(v) ?? []) {
      if (!order.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, order.get(w)!));
    }
    if (low.get(v) === order.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (files.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of [...files.keys()].sort()) if (!order.has(v)) connect(v);
  return found.sort((a, b) => a[0].localeCompare(b[0]));
}

/** What breaks the floor plan in the tree at `root` (a folder holding src/). */
export function checkFloors(root: string, floors: Room[] = FLOORS, owners: Record<string, string[]> = OWNERS): Violation[] {
  const srcDir = join(root, 'src');
  const rooms = new Map(floors.map((room) => [room.folder, room]));
  const files = sourceFiles(srcDir).map((path) => read(srcDir, path));
  const violations: Violation[] = [];
  for (const file of files) {
    const from = folderOf(file.rel);
    const room = rooms.get(from);
    if (!room) {
      violations.push({ kind: 'unknown-folder', what: `${file.rel} is in no row of the floor plan` });
      continue;
    }
    for (const target of file.imports) {
      const to = folderOf(target);
      if (to === from || room.mayImport.includes(to)) continue;
      const toRoom = rooms.get(to);
      const kind = toRoom && toRoom.floor === 5 && room.floor === 5 ? 'floor-5' : 'up-a-floor';
      violations.push({ kind, what: `${file.rel} imports ${target}` });
    }
    for (const api of file.apis) {
      if (!owns(file.rel, owners[api] ?? [])) violations.push({ kind: 'owner', what: `${file.rel} uses ${api}` });
    }
  }
  const graph = new Map(files.map((file) => [file.rel, file.imports]));
  for (const cycle of cycles(graph)) violations.push({ kind: 'cycle', what: cycle.join(' <-> ') });
  return violations;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const violations = checkFloors(resolve(dirname(new URL(import.meta.url).pathname), '../..'));
  if (process.argv.includes('--json')) console.log(JSON.stringify(violations, null, 2));
  else {
    for (const v of violations) console.log(`${v.kind}: ${v.what}`);
    console.log(`${violations.length} violations of the floor plan`);
  }
}
