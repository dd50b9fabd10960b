import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { commandLineWord, flagsOf, namesIn } from '../../src/cli/wording.js';
import { measure } from '../../scripts/arch/shape.js';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * The files that spell command lines on purpose, each the one place its flags are written; every
 * other library string names an option or an operation by its library name between backticks.
 */
const COMMAND_LINE_TABLES: Record<string, string> = {
  'src/server/command-line.ts':
    "serve's options as data: cli/serve.ts and cli/export.ts declare them from it, and the systemd export writes the unit's command line",
  'src/server/status/command-lines.ts': "the status page's command lines, which a reader of the page copies into a shell",
  'src/transfer/readme.ts': 'the README a pack carries, read on the other side of the air gap by whoever runs depotkit there',
  'src/constants.ts': "other programs' command lines (caddy validate, systemctl) that the exporters write, as external interfaces",
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** Every string literal of the library (src/ but src/cli/), with where it is. */
function libraryStrings(): { file: string; line: number; text: string }[] {
  const strings: { file: string; line: number; text: string }[] = [];
  for (const path of sourceFiles(join(ROOT, 'src'))) {
    const file = relative(ROOT, path);
    if (file.startsWith('src/cli/')) continue;
    const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isStringLiteralLike(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
        strings.push({ file, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, text: node.text });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return strings;
}

describe('the library names options and operations, the CLI spells them', () => {
  it('no library string holds a flag, but in the declared command-line tables', () => {
    const stray = measure(ROOT).flagStrings.filter((f) => !(f.file in COMMAND_LINE_TABLES));
    expect(stray.map((f) => `${f.file}:${f.line} ${f.text}`)).toEqual([]);
  });

  it('every name between backticks in a library string is a flag a command has, or an operation with its command', async () => {
    const flags = flagsOf(await buildProgram());
    const unknown = libraryStrings().flatMap(({ file, line, text }) =>
      namesIn(text)
        .filter((name) => commandLineWord(name, flags) === undefined)
        .map((name) => `${file}:${line} \`${name}\``),
    );
    expect(unknown).toEqual([]);
  });
});
