// Measures the shape rules of docs/architecture.md: file and function lengths, imports between
// floor-5 folders, and flag names in library strings. Used by test/architecture/floors.test.ts and
// runnable by hand: `npx tsx scripts/arch/shape.ts`.
import { join, relative, dirname, resolve } from 'node:path';
import ts from 'typescript';
import { parsedSource, sourceFiles } from './sources.js';

export const MAX_FILE_LINES = 400;
export const MAX_FUNCTION_LINES = 80;
const FLOOR_5 = ['check', 'simulators', 'export', 'transfer'];
const FLAG = /(^|[\s'"`(])--[a-z][a-z0-9-]+/;

export interface Shape {
  longFiles: { file: string; lines: number }[];
  longFunctions: { file: string; name: string; line: number; lines: number }[];
  floorFiveImports: { file: string; imports: string }[];
  flagStrings: { file: string; line: number; text: string }[];
}

function functionName(node: ts.Node, file: ts.SourceFile): string {
  const named = node as ts.FunctionLikeDeclaration;
  if (named.name) return named.name.getText(file);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText(file);
  if (ts.isCallExpression(parent)) return `callback of ${parent.expression.getText(file).slice(0, 40)}`;
  return '(anonymous)';
}

function floorFive(root: string, file: string): string | undefined {
  const top = relative(join(root, 'src'), file).split('/')[0];
  return FLOOR_5.includes(top) ? top : undefined;
}

export function measure(root: string): Shape {
  const shape: Shape = { longFiles: [], longFunctions: [], floorFiveImports: [], flagStrings: [] };
  for (const path of sourceFiles(join(root, 'src'))) {
    const rel = relative(root, path);
    const { text, file } = parsedSource(path);
    const lineCount = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lineCount > MAX_FILE_LINES && rel !== 'src/constants.ts') shape.longFiles.push({ file: rel, lines: lineCount });
    const lineOf = (pos: number): number => file.getLineAndCharacterOfPosition(pos).line + 1;
    const library = !rel.startsWith('src/cli/');
    const from = floorFive(root, path);
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body) {
        const lines = lineOf(node.getEnd()) - lineOf(node.getStart(file)) + 1;
        if (lines > MAX_FUNCTION_LINES) {
          shape.longFunctions.push({ file: rel, name: functionName(node, file), line: lineOf(node.getStart(file)), lines });
        }
      }
      if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && from) {
        const spec = (node.moduleSpecifier as ts.StringLiteral).text;
        if (spec.startsWith('.')) {
          const to = floorFive(root, resolve(dirname(path), spec));
          if (to && to !== from) shape.floorFiveImports.push({ file: rel, imports: spec });
        }
      }
      if (
        library &&
        (ts.isStringLiteral(node) ||
          ts.isNoSubstitutionTemplateLiteral(node) ||
          ts.isTemplateHead(node) ||
          ts.isTemplateMiddle(node) ||
          ts.isTemplateTail(node))
      ) {
        if (FLAG.test(node.text)) shape.flagStrings.push({ file: rel, line: lineOf(node.getStart(file)), text: node.text.slice(0, 100) });
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  return shape;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const shape = measure(resolve(dirname(new URL(import.meta.url).pathname), '../..'));
  const show = process.argv.includes('--json');
  if (show) console.log(JSON.stringify(shape, null, 2));
  else {
    for (const f of shape.longFiles) console.log(`file ${f.file}: ${f.lines} lines`);
    for (const f of shape.longFunctions.sort((a, b) => b.lines - a.lines)) console.log(`function ${f.file}:${f.line} ${f.name}: ${f.lines} lines`);
    for (const f of shape.floorFiveImports) console.log(`floor-5 import ${f.file} -> ${f.imports}`);
    for (const f of shape.flagStrings) console.log(`flag ${f.file}:${f.line} ${JSON.stringify(f.text)}`);
    console.log(
      `${shape.longFiles.length} long files, ${shape.longFunctions.length} long functions, ${shape.floorFiveImports.length} floor-5 imports, ${shape.flagStrings.length} flag strings`,
    );
  }
}
