import { execFileSync } from 'node:child_process';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { startDepotServer } from '../../src/server/index.js';
import { buildDepot } from '../../src/depot/build.js';
import { mirrorDepot } from '../../src/transfer/mirror.js';
import { packDepot } from '../../src/transfer/pack.js';
import { unpackDepot } from '../../src/transfer/unpack.js';
import { DepotkitError, EXIT } from '../../src/util/errors.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { vendorLikeSource } from '../depot/helpers.js';
import { demo } from './helpers.js';

/** Each demo binary is this big: the demo's binaries together are several times the small file system's size. */
const BINARY = 512 * 1024;

let base: string;
let cleanup: () => Promise<void>;
let small: string;
let mounted = false;
/** One demo depot and one vendor-like source for every test: each only reads them. */
let depot: string;
let src: Awaited<ReturnType<typeof vendorLikeSource>>;

/** A real small file system: a 2 MB tmpfs (the sandbox runs tests as root; elsewhere these tests are skipped). */
beforeAll(async () => {
  ({ dir: base, cleanup } = await tempDir('depotkit-space-'));
  small = join(base, 'small');
  await mkdir(small);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', small], { stdio: 'ignore' });
    mounted = true;
  } catch {
    mounted = false;
    return;
  }
  depot = await demo(join(base, 'depot'), BINARY);
  src = await vendorLikeSource(join(base, 'build-src'), BINARY);
});
afterAll(async () => {
  if (mounted) execFileSync('umount', [small]);
  await cleanup();
});

/** Every message names both numbers: what is needed and what is free. */
function expectBothNumbers(stderr: string): void {
  expect(stderr).toMatch(/needs \d+ bytes .* has \d+ bytes .*free; nothing was written/);
}

/** The library's refusal: the environment's exit code and both numbers in its sentence. */
async function refusedForSpace(run: Promise<unknown>): Promise<DepotkitError> {
  const err = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DepotkitError);
  expect((err as DepotkitError).exitCode).toBe(EXIT.environment);
  expectBothNumbers((err as DepotkitError).message);
  return err as DepotkitError;
}

describe('space is checked before bytes', () => {
  it('depot build into a file system too small stops at once, exit 3, both numbers, nothing written', async (ctx) => {
    if (!mounted) ctx.skip();
    await refusedForSpace(buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out: join(small, 'depot') }));
    expect(await readdir(small)).toEqual([]);
  });

  it('depot build with links fits (links take no room for data)', async (ctx) => {
    if (!mounted) ctx.skip();
    // Hard links cannot cross file systems: symbolic links do, and take no room for data.
    const out = join(small, 'linked');
    const report = await buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out, mode: 'symlink' });
    expect(report.ok).toBe(true);
    await rm(out, { recursive: true, force: true });
  });

  it('depot unpack into a file system too small stops at once, exit 3, both numbers, nothing written', async (ctx) => {
    if (!mounted) ctx.skip();
    const pack = join(base, 'pack');
    expect((await packDepot({ depot, out: pack, volumeSize: 1024 ** 3 })).ok).toBe(true);
    await refusedForSpace(unpackDepot({ media: [pack], out: join(small, 'unpacked') }));
    expect(await readdir(small)).toEqual([]);
  });

  it('depot pack onto a file system too small stops after planning the volumes, exit 3, both numbers, nothing written', async (ctx) => {
    if (!mounted) ctx.skip();
    const err = await refusedForSpace(packDepot({ depot, out: join(small, 'pack'), volumeSize: 1024 ** 3 }));
    expect(err.message).toContain('The pack needs');
    expect(await readdir(small)).toEqual([]);
    // The command line gives the same refusal its exit code (build's, unpack's and mirror's are the same library error).
    const res = await runCli(['depot', 'pack', depot, '--out', join(small, 'pack')]);
    expect(res.code).toBe(EXIT.environment);
    expectBothNumbers(res.stderr);
    expect(await readdir(small)).toEqual([]);
  });

  it('depot pack of one small release fits where the whole depot does not', async (ctx) => {
    if (!mounted) ctx.skip();
    const report = await packDepot({ depot, out: join(small, 'one'), volumeSize: 1024 ** 3, select: { components: ['VCENTER'] } });
    expect(report.ok).toBe(true);
    await rm(join(small, 'one'), { recursive: true, force: true });
  });

  it('depot mirror onto a file system too small stops before the lock or any metadata, exit 3, both numbers, nothing written', async (ctx) => {
    if (!mounted) ctx.skip();
    const ca = await createCa({ keySize: 2048 });
    const issued = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
    const server = await startDepotServer({ root: depot, host: '127.0.0.1', port: 0, tls: { certPem: issued.chainPem, keyPem: issued.keyPem } });
    try {
      const url = server.url.replace('127.0.0.1', 'localhost');
      const err = await refusedForSpace(mirrorDepot({ url, out: join(small, 'mirror'), caPems: [ca.certPem] }));
      expect(err.message).toContain('The mirror needs');
      expect(await readdir(small)).toEqual([]);
      // One release's binaries fit: the selection is what is judged.
      const one = await mirrorDepot({ url, out: join(small, 'mirror'), caPems: [ca.certPem], select: { components: ['VCENTER'] } });
      expect(one.failed).toEqual([]);
      expect(one.downloaded.length).toBe(1);
    } finally {
      await server.close();
      await rm(join(small, 'mirror'), { recursive: true, force: true });
    }
  });
});
