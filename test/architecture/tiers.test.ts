import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ownModules, quickTier, slowBecause } from '../helpers/tiers.js';
import { suite } from '../../vitest.config.js';

const ROOT = resolve(import.meta.dirname, '../..');

describe('the quick tier (npm run test:quick)', () => {
  it('leaves out the modules that run the built CLI or a peer, and whatever imports them', () => {
    for (const module of ['helpers/cli.ts', 'helpers/nginx.ts', 'helpers/terminal.ts', 'cert/openssl.ts', 'export/helpers.ts']) {
      expect(slowBecause(join(ROOT, 'test', module)), module).toMatch(/spawns a process/);
    }
    expect(slowBecause(join(ROOT, 'test/browser/status-page.test.ts'))).toBeDefined();
    expect(slowBecause(join(ROOT, 'test/docs/readme.test.ts'))).toMatch(/^helpers\/readme\.ts/);
    expect(slowBecause(join(ROOT, 'test/helpers/process.ts'))).toBeUndefined();
  });

  it('holds test files only, none of which names the built CLI, a child process or dist/', () => {
    const quick = quickTier();
    expect(quick.length).toBeGreaterThan(0);
    expect(quick).toContain('test/architecture/tiers.test.ts');
    // This file names them in the pattern below.
    for (const file of quick.filter((f) => f !== 'test/architecture/tiers.test.ts')) {
      expect(file).toMatch(/^test\/.+\.test\.ts$/);
      expect(readFileSync(join(ROOT, file), 'utf8'), file).not.toMatch(/\b(runCli|spawnCliJson|execFile|spawnSync)\b|helpers\/cli\.js|'dist\//);
    }
  });
});

describe('the module graphs (vitest.config.ts)', () => {
  it('gives a graph of its own to each file that replaces a library module (vi.mock), and shares the rest', () => {
    const own = ownModules();
    expect(own).toContain('test/transfer/named-temps.test.ts');
    for (const file of own) expect(readFileSync(join(ROOT, file), 'utf8'), file).toMatch(/\bvi\.mock\(/);
    const projects = (suite().test?.projects ?? []) as { test: { name: string; include: string[]; exclude?: string[]; isolate: boolean } }[];
    expect(projects.map((p) => [p.test.name, p.test.isolate])).toEqual([
      ['shared', false],
      ['own-modules', true],
    ]);
    expect(projects[0]!.test.exclude).toEqual(own);
    expect(projects[1]!.test.include).toEqual(own);
  });
});
