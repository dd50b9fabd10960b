import { existsSync, readFileSync } from 'node:fs';
import { stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { TestSpecification, Vitest } from 'vitest/node';
import { LongestFirst, recordedDurations } from '../setup/longest-first.js';
import environment from '../setup/environment.js';
import inMemory from '../setup/temp-in-memory.js';
import { DISK_TMPDIR } from '../helpers/temp.js';
import { freePorts, portAccepts } from '../helpers/ports.js';
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

describe('the order of the files (test/setup/longest-first.ts)', () => {
  const spec = (file: string, isolate = false) => ({ moduleId: join(ROOT, file), project: { config: { isolate } } }) as unknown as TestSpecification;
  const sort = (files: TestSpecification[]) =>
    new LongestFirst({ config: { root: ROOT } } as unknown as Vitest).sort(files).then((sorted) => sorted.map((s) => relative(ROOT, s.moduleId)));

  it('records durations of test files that exist, in seconds', () => {
    const recorded = recordedDurations();
    expect(Object.keys(recorded).length).toBeGreaterThan(100);
    for (const [file, seconds] of Object.entries(recorded)) {
      expect(existsSync(join(ROOT, file)), file).toBe(true);
      expect(seconds).toBeGreaterThanOrEqual(0);
    }
  });

  it('runs the isolated files first, then the files not yet recorded (larger first), then the longest recorded', async () => {
    const recorded = recordedDurations();
    const [long, short] = Object.keys(recorded)
      .sort((a, b) => recorded[b]! - recorded[a]!)
      .filter((_, i, all) => i === 0 || i === all.length - 1);
    const sorted = await sort([
      spec(short!),
      spec('vitest.quick.config.ts'),
      spec(long!),
      spec('vitest.config.ts'),
      spec('test/transfer/named-temps.test.ts', true),
    ]);
    expect(sorted).toEqual(['test/transfer/named-temps.test.ts', 'vitest.config.ts', 'vitest.quick.config.ts', long, short]);
  });
});

describe('where the tests write (test/setup/temp-in-memory.ts)', () => {
  it.skipIf(!existsSync('/dev/shm'))('makes a folder like /tmp on /dev/shm the TMPDIR of the run, and removes it with what is in it', async () => {
    vi.stubEnv('TMPDIR', undefined);
    // The set-up names the disk folder to the run and takes it back after: this worker keeps its own.
    vi.stubEnv(DISK_TMPDIR, process.env[DISK_TMPDIR]);
    const teardown = await inMemory();
    const dir = process.env.TMPDIR!;
    expect(dir).toMatch(/^\/dev\/shm\/depotkit-test-/);
    expect((await stat(dir)).mode & 0o7777).toBe(0o1777);
    expect(tmpdir()).toBe(dir);
    await writeFile(join(dir, 'left-behind'), 'x');
    await teardown!();
    expect(existsSync(dir)).toBe(false);
    expect(process.env.TMPDIR).toBeUndefined();
  });

  it('leaves a TMPDIR the user set alone', async () => {
    vi.stubEnv('TMPDIR', '/var/tmp');
    expect(await inMemory()).toBeUndefined();
    expect(process.env.TMPDIR).toBe('/var/tmp');
  });
});

describe("the run's environment (test/setup/environment.ts)", () => {
  it('passes on no proxy and no extra CA file, to the workers and what they start', async () => {
    expect(process.env.NODE_EXTRA_CA_CERTS).toBeUndefined();
    expect(process.env.HTTPS_PROXY).toBeUndefined();
    vi.stubEnv('HTTPS_PROXY', 'http://proxy.test:3128');
    vi.stubEnv('NODE_EXTRA_CA_CERTS', '/etc/ssl/certs/ca-certificates.crt');
    environment();
    expect(process.env.HTTPS_PROXY).toBeUndefined();
    expect(process.env.NODE_EXTRA_CA_CERTS).toBeUndefined();
  });
});

describe('the ports handed to peers (test/helpers/ports.ts)', () => {
  it('hands out ports that differ from each other and that nothing listens on', async () => {
    const ports = await freePorts(40);
    expect(new Set(ports).size).toBe(40);
    expect(await Promise.all(ports.map((port) => portAccepts(port)))).not.toContain(true);
  });
});
