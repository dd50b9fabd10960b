import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { OPTION_TABLE, TAKES, commandPath, isFromTable } from '../../src/cli/option-table.js';
import { buildProgram } from '../../src/cli/program.js';
import { commandLineWord, flagsOf, namesIn } from '../../src/cli/wording.js';
import { measure } from '../../scripts/arch/shape.js';
import { parsedSource, sourceFiles } from '../../scripts/arch/sources.js';

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

/** Every string literal of the library (src/ but src/cli/), with where it is. */
function libraryStrings(): { file: string; line: number; text: string }[] {
  const strings: { file: string; line: number; text: string }[] = [];
  for (const path of sourceFiles(join(ROOT, 'src'))) {
    const file = relative(ROOT, path);
    if (file.startsWith('src/cli/')) continue;
    const source = parsedSource(path).file;
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

/** Every command of the program, groups included. */
function commandsOf(cmd: Command): Command[] {
  return [cmd, ...cmd.commands.flatMap(commandsOf)];
}

/** The files of the option table: the one place an option is declared. */
const TABLE_FILES = ['src/cli/option-table.ts'];

describe('every option is defined once, in the option table', () => {
  it('no command file declares an option (new Option, .option, .requiredOption, .addOption)', () => {
    const declared: string[] = [];
    for (const path of sourceFiles(join(ROOT, 'src/cli'))) {
      const file = relative(ROOT, path);
      if (TABLE_FILES.includes(file)) continue;
      const source = parsedSource(path).file;
      const visit = (node: ts.Node): void => {
        const where = () => `${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;
        if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'Option') declared.push(`${where()} new Option`);
        if (
          ts.isCallExpression(node) &&
          ts.isPropertyAccessExpression(node.expression) &&
          ['option', 'requiredOption', 'addOption'].includes(node.expression.name.text)
        )
          declared.push(`${where()} .${node.expression.name.text}()`);
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(declared).toEqual([]);
  });

  it('gives every command only options the table made, and the table names only commands there are and rows some command takes', async () => {
    // The program's own --version is commander's.
    const commands = (await buildProgram()).commands.flatMap(commandsOf);
    const stray = commands.flatMap((cmd) => cmd.options.filter((o) => !isFromTable(o)).map((o) => `${commandPath(cmd)} ${o.flags}`));
    expect(stray).toEqual([]);
    const paths = new Set(commands.map(commandPath));
    expect(Object.keys(TAKES).filter((path) => !paths.has(path))).toEqual([]);
    // A command with options takes them from TAKES; one the table forgets would have none.
    expect(commands.filter((cmd) => cmd.commands.length === 0 && cmd.options.length === 0).map(commandPath)).toEqual([]);
    const taken = new Set(Object.values(TAKES).flat());
    expect(Object.keys(OPTION_TABLE).filter((name) => !taken.has(name))).toEqual([]);
    expect([...taken].filter((name) => !(name in OPTION_TABLE))).toEqual([]);
    const strayVariants = Object.entries(OPTION_TABLE).flatMap(([name, row]) =>
      Object.keys(row.for ?? {})
        .filter((path) => !TAKES[path]?.includes(name))
        .map((path) => `${name} for ${path}`),
    );
    expect(strayVariants).toEqual([]);
  });
});
