import { writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { CommanderError, type Command } from 'commander';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { inCommandLineWords } from '../../src/cli/wording.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { EXPORT_TARGETS, exportConfig } from '../../src/export/index.js';
import { createCa, issueServerCert, lintServerCertificate, type CaMaterial } from '../../src/cert/index.js';
import { leafGivenAsCa } from '../../src/check/given-ca.js';
import { statusData } from '../../src/server/status-data.js';
import { renderStatusPage } from '../../src/server/status-page.js';
import { brokenServerCert, customCa } from '../helpers/certs.js';
import { runCli } from '../helpers/cli.js';
import { REPO_ROOT, tempDir } from '../helpers/temp.js';
import { parsedSource, sourceFiles } from '../../scripts/arch/sources.js';
import { DEPOT_USER, useServedFixture } from './fixtures.js';

/**
 * Every command line the CLI prints, in a finding, a hint, a note or a page, is one a user can paste: each is
 * parsed with the program's own option table (the command exists, each option is one it has, each takes the
 * value it is given, no word is left over). The lines come from every string of src/ (a template's values
 * stand for whatever they hold) and from the producers that compose a command line from parts.
 */

/** A template's value in a source string: it may be a value, or a whole part of the line (it is then skipped). */
const ANY = '<…>';

/** Every string literal and template of src/, a template's values as ANY, `${invokedAs()}` as depotkit. */
function sourceStrings(): { where: string; text: string }[] {
  const strings: { where: string; text: string }[] = [];
  for (const path of sourceFiles(join(REPO_ROOT, 'src'))) {
    const source = parsedSource(path).file;
    const where = (node: ts.Node) => `${relative(REPO_ROOT, path)}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;
    const visit = (node: ts.Node): void => {
      if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) strings.push({ where: where(node), text: node.text });
      else if (ts.isTemplateExpression(node)) {
        const value = (e: ts.Expression) => (e.getText(source) === 'invokedAs()' ? 'depotkit' : ANY);
        strings.push({ where: where(node), text: node.head.text + node.templateSpans.map((s) => value(s.expression) + s.literal.text).join('') });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return strings;
}

/** Words as a POSIX shell splits them (quotes kept out), a placeholder such as `<depot FQDN>` one word. */
function words(text: string): string[] {
  // An opening parenthesis is not part of the word after it: "(depotkit serve)".
  return [...text.replace(/(^|\s)\(/g, '$1( ').matchAll(/'[^']*'\S*|"[^"]*"\S*|<[^<>]*>\S*|\S+/g)].map((m) => m[0]);
}

/** Punctuation that ends a command line in a sentence: `(depotkit serve)`, `...; depotkit installer trust`. */
const END = /[.,;:)]+$/;
/** A word that may be a command's operand: a placeholder, a path, a URL, an address, a number. */
const VALUE_LIKE = /^(<.*>|'.*'|".*"|.*[/.:=@0-9].*)$/;

interface Line {
  text: string;
  argv: string[];
  /** The command's name alone, as a sentence names it ("Start the server (depotkit serve)"). */
  bare: boolean;
}

/** The command lines in `text` (each starting at `depotkit`), as far as a shell would take them as arguments. */
function commandLines(text: string, program: Command): Line[] {
  const lines: Line[] = [];
  const all = words(text);
  for (let i = all.indexOf('depotkit'); i >= 0; i = all.indexOf('depotkit', i + 1)) {
    let cmd = program;
    const argv: string[] = [];
    let j = i + 1;
    let ended = false;
    for (; j < all.length && !ended; j++) {
      const word = all[j]!.replace(END, '');
      const sub = cmd.commands.find((c) => c.name() === word || c.aliases().includes(word));
      // A word after a command that has commands, not one of them, is a misspelt command ("depotkit cert issu").
      if (!sub && cmd !== program && cmd.commands.length > 0 && /^[a-z][a-z-]*$/.test(word)) argv.push(word);
      if (!sub) break;
      cmd = sub;
      argv.push(word);
      ended = word !== all[j];
    }
    // Not a command ("depotkit signs RSA keys only").
    if (cmd === program) continue;
    const commandWords = argv.length;
    let operands = 0;
    let takesValue = false;
    for (; j < all.length && !ended; j++) {
      // "a b ...": more operands of the same kind.
      if (all[j] === '...') continue;
      const word = all[j]!.replace(END, '');
      ended = word !== all[j];
      const operandDue = operands < cmd.registeredArguments.length || cmd.registeredArguments.at(-1)?.variadic === true;
      if (word === ANY) {
        // A value given where one is due; anywhere else it stands for words the test cannot know.
        if (takesValue || operandDue) argv.push('<value>');
        if (!takesValue && operandDue) operands++;
        takesValue = false;
      } else if (word.startsWith('-')) {
        argv.push(word);
        const option = cmd.options.find((o) => o.long === word.split('=')[0] || o.short === word);
        takesValue = option !== undefined && !word.includes('=') && (option.required || option.optional);
      } else if (takesValue) {
        argv.push(word.replace(/^(['"])(.*)\1$/, '$2'));
        takesValue = false;
      } else if (VALUE_LIKE.test(word) && operandDue) {
        argv.push(word.replace(/^'(.*)'$/, '$1'));
        operands++;
      } else break;
    }
    lines.push({ text: all.slice(i, j).join(' '), argv, bare: argv.length === commandWords });
  }
  return lines;
}

/** Why `line` does not parse with the program's option table, or undefined when it does. */
async function parseProblem(line: Line): Promise<string | undefined> {
  const program = await buildProgram();
  const quiet = (cmd: Command): void => {
    cmd.configureOutput({ writeOut: () => {}, writeErr: () => {}, outputError: () => {} });
    // Parsed only: nothing runs.
    if (cmd.commands.length === 0) cmd.action(() => {});
    cmd.commands.forEach(quiet);
  };
  quiet(program);
  try {
    await program.parseAsync(['node', 'depotkit', ...line.argv]);
    return undefined;
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    // A command named in a sentence, not a line to paste, needs not its required parts.
    const named = ['commander.missingArgument', 'commander.missingMandatoryOptionValue', 'commander.help', 'commander.helpDisplayed'];
    if (line.bare && named.includes(err.code)) return undefined;
    // A placeholder stands for a value the option's parser would check.
    if (err.code === 'commander.invalidArgument' && line.argv.some((w) => /^<.*>$/.test(w))) return undefined;
    return err.message;
  }
}

async function unpasteable(texts: { where: string; text: string }[]): Promise<string[]> {
  const program = await buildProgram();
  const problems: string[] = [];
  for (const { where, text } of texts) {
    for (const line of commandLines(inCommandLineWords(text), program)) {
      const problem = await parseProblem(line);
      if (problem) problems.push(`${where}: ${line.text} -- ${problem}`);
    }
  }
  return problems;
}

describe('the command lines check prints through the built CLI', () => {
  const served = useServedFixture('depotkit-pasteable-check-');

  it('spell the options of the command they name, though check loads no other command', async () => {
    const f = served.fixture();
    const url = `https://127.0.0.1:${served.server().port}`;
    // The certificate names localhost and 127.0.0.1, not the name the installer is given: a fix issues one that does.
    const check = ['check', url, '--ca', join(f.caDir, 'ca-cert.pem'), '--user', DEPOT_USER, '--password-file', f.passwordFile];
    const byName = await runCli([...check, '--as-host', 'depot.lab.local']);
    const byAddress = await runCli(check);
    expect(byName.stdout).toContain('cert.san.host-missing');
    expect(byAddress.stdout).toContain('open.patch-store.auth-required');
    const printed = `${byName.stdout}${byAddress.stdout}`;
    expect(printed).not.toMatch(/`[a-z][A-Za-z]*`/);
    const lines = commandLines(printed, await buildProgram());
    expect(lines.map((l) => l.argv.slice(0, 3).join(' '))).toEqual(expect.arrayContaining(['cert issue --ca', 'serve <dir> --open']));
    expect(await unpasteable([{ where: 'check', text: printed }])).toEqual([]);
  });
});

describe('every command line the CLI prints can be pasted', () => {
  let ca: CaMaterial;
  beforeAll(async () => {
    ca = await createCa({ keySize: 2048 });
  });

  it('finds command lines as a sentence holds them, and refuses one that does not parse', async () => {
    const program = await buildProgram();
    const found = commandLines(
      inCommandLineWords('Start the server (`serveDepot`) or run `issueCert` `caDir` <ca-dir> `dns` a.test `outDir` <out>; then more.'),
      program,
    );
    expect(found.map((l) => l.argv)).toEqual([['serve'], ['cert', 'issue', '--ca', '<ca-dir>', '--dns', 'a.test', '--out', '<out>']]);
    expect(await unpasteable([{ where: 'a', text: 'run depotkit cert issue --ca x --ips 1.2.3.4 --out y.' }])).toHaveLength(1);
    expect(await unpasteable([{ where: 'b', text: 'run depotkit serve <dir> --cert a --ca b.' }])).toHaveLength(1);
    expect(await unpasteable([{ where: 'c', text: 'run depotkit cert issu --ca x.' }])).toHaveLength(1);
  });

  it('in every string of the library and the CLI', async () => {
    const texts = sourceStrings();
    const lines = texts.flatMap(({ text }) => commandLines(inCommandLineWords(text), program0));
    // The scan sees the hints: the lint's, check's, verify's, serve's own.
    expect(lines.length).toBeGreaterThan(80);
    expect(await unpasteable(texts)).toEqual([]);
  });

  it("in the certificate lint's fixes, a fix for each rule that fires", async () => {
    const host = 'depot.lab.local';
    const other = customCa();
    const certs = [
      ...(['no-san', 'ip-cn', 'expired', 'wrong-host', 'self-signed'] as const).map((kind) => brokenServerCert(other, kind, host).certPem),
      (await issueServerCert(ca, { dns: ['other.test'], keySize: 2048 })).certPem,
    ];
    const texts = certs.flatMap((pem) =>
      [host, '127.0.0.1'].flatMap((h) =>
        lintServerCertificate(pem, { host: h, ips: ['127.0.0.1'], caPems: [ca.certPem] }).map((f) => ({ where: f.id, text: f.fix ?? '' })),
      ),
    );
    expect(new Set(texts.map((t) => t.where)).size).toBeGreaterThan(5);
    expect(await unpasteable(texts)).toEqual([]);
  });

  it("in check's fixes for a leaf given as its CA", async () => {
    const self = brokenServerCert(customCa(), 'self-signed', 'depot.test');
    const findings = ['depot.test', '127.0.0.1'].flatMap((h) => leafGivenAsCa(self.certPem, [], h, [self.certPem]));
    expect(await unpasteable(findings.map((f) => ({ where: f.id, text: f.fix ?? '' })))).toEqual([]);
  });

  it("in an export's next steps and its check", async () => {
    const { dir, cleanup } = await tempDir('depotkit-pasteable-');
    try {
      await makeDemoDepot(join(dir, 'depot'), { binarySize: 1 });
      const leaf = await issueServerCert(ca, { dns: ['depot.test'], keySize: 2048 });
      await writeFile(join(dir, 'cert.pem'), leaf.chainPem);
      await writeFile(join(dir, 'key.pem'), leaf.keyPem, { mode: 0o600 });
      const texts: { where: string; text: string }[] = [];
      for (const target of EXPORT_TARGETS) {
        const report = await exportConfig({
          target,
          root: join(dir, 'depot'),
          out: join(dir, target),
          ...(target === 'systemd' ? { ca: join(dir, 'ca') } : { cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') }),
          auth: { user: 'depot', password: 'Depot-Pass-1!' },
          openPrefixes: ['umds-patch-store'],
          openHcl: true,
        });
        texts.push(...[report.check, ...report.nextSteps, ...report.warnings].map((text) => ({ where: target, text })));
      }
      expect(await unpasteable(texts)).toEqual([]);
    } finally {
      await cleanup();
    }
  });

  it("on the status page's command lines", async () => {
    const { dir, cleanup } = await tempDir('depotkit-pasteable-');
    try {
      await makeDemoDepot(join(dir, 'depot'), { binarySize: 1 });
      const leaf = await issueServerCert(ca, { dns: ['depot.test'], keySize: 2048 });
      const data = await statusData(join(dir, 'depot'), {
        url: 'https://depot.test:8443',
        certPem: leaf.chainPem,
        auth: { user: 'depot' },
        openPrefixes: ['umds-patch-store'],
      });
      const page = renderStatusPage(data)
        .replace(/<[^>]+>/g, ' ')
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&#39;/g, "'");
      const lines = commandLines(page, await buildProgram());
      expect(lines.length).toBeGreaterThan(1);
      expect(await unpasteable([{ where: 'status page', text: page }])).toEqual([]);
    } finally {
      await cleanup();
    }
  });
});

let program0: Command;
beforeAll(async () => {
  program0 = await buildProgram();
});
