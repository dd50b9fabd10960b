/**
 * The README is a short path a newcomer follows from a fresh clone: what
 * depotkit is, installing it, the two commands, the flow, the rehearsal and
 * where the rest is; the reference lives in docs/, a page per command group.
 * Read as files, in-process: no command is run.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { REPO_ROOT, tempDir } from '../helpers/temp.js';
import { runBash, writeDepotkitShim } from '../helpers/readme.js';

const read = (file: string) => readFile(join(REPO_ROOT, file), 'utf8');

/** The markdown files a reader is sent to: the README and every page under docs/. */
async function markdownFiles(): Promise<string[]> {
  const docs = (await readdir(join(REPO_ROOT, 'docs'), { recursive: true })).map(String).filter((f) => f.endsWith('.md'));
  return ['README.md', ...docs.map((f) => join('docs', f)).sort()];
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replaceAll(' ', '-');

/** The headings of a markdown text at a level (2: `## `), outside code blocks. */
function headings(markdown: string, level: number): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '');
  return [...prose.matchAll(new RegExp(`^${'#'.repeat(level)} (.+)$`, 'gm'))].map((m) => m[1]!.trim());
}

/** The anchors of a markdown file's headings, every level. */
async function anchorsOf(file: string): Promise<string[]> {
  const markdown = await read(file);
  return [1, 2, 3, 4, 5, 6].flatMap((level) => headings(markdown, level).map(anchorOf));
}

/** The relative links of a markdown text (not http:, not mailto:), as written. */
function relativeLinks(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((link) => !/^[a-z]+:/.test(link));
}

/** Every command of the program, by its full name without `depotkit` (`depot build`). */
function commandNames(cmd: Command, prefix: string[] = []): string[] {
  return cmd.commands
    .filter((c) => c.name() !== 'help')
    .flatMap((c) => {
      const name = [...prefix, c.name()];
      return [name.join(' '), ...commandNames(c, name)];
    });
}

describe("the README, a newcomer's short path", () => {
  it('goes install, the two commands, the flow, the rehearsal, then where the rest is; its table of contents names each part', async () => {
    const readme = await read('README.md');
    expect(headings(readme, 2)).toEqual([
      'Install',
      'Try it: two commands',
      'The whole flow, by hand',
      'Rehearsal: the whole flow on one machine',
      'Reference',
    ]);
    // A page, not a manual: the reference is in docs/.
    expect(readme.split('\n').length).toBeLessThan(300);
    const top = readme.slice(0, readme.indexOf('\n## '));
    const contents = [...top.matchAll(/^- \[[^\]]+\]\(#([^)]+)\)/gm)].map((m) => m[1]);
    expect(contents).toEqual(headings(readme, 2).map(anchorOf));
  });

  it('installs depotkit before any step uses it, and every step runs the installed command, never npx depotkit', async () => {
    const readme = await read('README.md');
    const install = readme.slice(readme.indexOf('\n## Install\n'), readme.indexOf('\n## Try it'));
    expect(install).toMatch(/^npm link\b/m);
    expect(install).toMatch(/^depotkit --version\b/m);
    // Outside the checkout, npx asks the registry for a package of that name, which is not this project.
    for (const file of await markdownFiles()) {
      const blocks = [...(await read(file)).matchAll(/```(?:sh|bash)\n([\s\S]*?)```/g)].map((m) => m[1]!);
      for (const block of blocks) expect(block, file).not.toMatch(/\bnpx depotkit\b/);
    }
  });

  it("offers the flow by hand a demo depot in step 1's place that a second paste keeps", async () => {
    const readme = await read('README.md');
    const demo = /replace step 1's `depot build` with `([^`]+)`/.exec(readme)?.[1];
    expect(demo).toContain('depotkit depot demo depot');
    const { dir, cleanup } = await tempDir('depotkit-readme-demo-');
    try {
      await mkdir(join(dir, 'bin'));
      await writeDepotkitShim(join(dir, 'bin'));
      const env = { ...process.env, PATH: `${join(dir, 'bin')}:${process.env.PATH}` };
      const r = await runBash(`${demo}\n${demo}\n`, { cwd: dir, env, seconds: 120, file: join(dir, 'twice.sh') });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toMatch(/already exists|--force/);
      expect(existsSync(join(dir, 'depot', 'PROD'))).toBe(true);
    } finally {
      await cleanup();
    }
  });

  it('bounds every wait: a loop in a shell block of the README or docs/ gives up at a deadline and says what it waited for', async () => {
    let loops = 0;
    for (const file of await markdownFiles()) {
      for (const [, block] of (await read(file)).matchAll(/```(?:sh|bash)\n([\s\S]*?)```/g)) {
        if (!/^\s*(until|while)\s/m.test(block!)) continue;
        loops++;
        expect(block, file).toMatch(/deadline=\$\(\(SECONDS \+ \d+\)\)/);
        expect(block, file).toMatch(/gave up waiting for \$what/);
      }
    }
    expect(loops).toBeGreaterThanOrEqual(3);
  });

  it('says how long npm test takes and what it skips without which tools; docs/testing.md names every file that skips', async () => {
    const readme = await read('README.md');
    expect(readme).toMatch(/`npm test` takes \d+ to \d+ minutes/);
    expect(readme).toMatch(/\| without \| skipped \|/);
    expect(readme).toContain('npm run package');
    const testing = await read('docs/testing.md');
    const named = new Set(testing.match(/test\/[\w/.-]+\.test\.ts/g));
    const tests = (await readdir(join(REPO_ROOT, 'test'), { recursive: true })).map(String).filter((f) => f.endsWith('.test.ts'));
    const skipping: string[] = [];
    for (const file of tests) {
      if (/\.skipIf\(|\.runIf\(|\bctx\.skip\(|\bit\.skip\(/.test(await readFile(join(REPO_ROOT, 'test', file), 'utf8'))) skipping.push(`test/${file}`);
    }
    expect(skipping.length).toBeGreaterThan(5);
    expect(skipping.filter((file) => !named.has(file))).toEqual([]);
  });
});

describe('the reference in docs/', () => {
  it('shows every command on a page the README links to', async () => {
    const readme = await read('README.md');
    const linked = relativeLinks(readme)
      .map((link) => link.split('#')[0]!)
      .filter((file) => /^docs\/(commands|runbooks)\/.+\.md$/.test(file));
    const pages = (await Promise.all(linked.map(read))).join('\n');
    const names = commandNames(await buildProgram());
    expect(names.length).toBeGreaterThan(25);
    // A page shows a command as it is typed (`depotkit depot build`) or names it (`depot build`).
    const shown = (name: string) => pages.includes(`depotkit ${name}`) || pages.includes(`\`${name}`);
    expect(names.filter((name) => !shown(name))).toEqual([]);
  });

  it('has no link to a file or a heading that is not there', async () => {
    const broken: string[] = [];
    for (const file of await markdownFiles()) {
      const markdown = await read(file);
      for (const link of relativeLinks(markdown)) {
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path ? relative(REPO_ROOT, join(REPO_ROOT, dirname(file), path)) : file;
        if (!existsSync(join(REPO_ROOT, target))) {
          broken.push(`${file}: ${link}`);
          continue;
        }
        if (!anchor || !target.endsWith('.md')) continue;
        if (!(await anchorsOf(target)).includes(anchor)) broken.push(`${file}: ${link}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
