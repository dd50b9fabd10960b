import { mkdir, readdir, realpath, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEMP_PREFIX } from '../../src/constants.js';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { Checkpoints, VerifiedState, stateFileFor } from '../../src/depot/place.js';
import { makeEsxDemo } from '../../src/esx/index.js';
import { startDepotServer } from '../../src/server/index.js';
import { mirrorEsx } from '../../src/transfer/esx-mirror/index.js';
import { listFiles } from '../../src/util/walk.js';
import { type Flush, recordFlushes } from '../helpers/flushes.js';
import { tempDir } from '../helpers/temp.js';

let base: string;
let cleanup: () => Promise<void>;
let url: string;
let caPems: string[];
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ dir: base, cleanup } = await tempDir('depotkit-esx-durable-'));
  base = await realpath(base);
  const site = join(base, 'site');
  await makeEsxDemo(join(site, 'umds-patch-store'), { vibs: 6, vibSize: 64 * 1024 });
  const ca = await createCa({ keySize: 2048 });
  const issued = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
  caPems = [ca.certPem];
  const server = await startDepotServer({ root: site, host: '127.0.0.1', port: 0, tls: { certPem: issued.chainPem, keyPem: issued.keyPem } });
  url = `${server.url.replace('127.0.0.1', 'localhost')}/umds-patch-store/index.xml`;
  stop = () => server.close();
});
afterAll(async () => {
  await stop();
  await cleanup();
});

/** The index of the last flush of the verified state's temporary file: the save that holds every VIB. */
const lastStateFlush = (flushes: Flush[], out: string) =>
  flushes.findLastIndex((f) => dirname(f.path) === dirname(stateFileFor(out)) && basename(f.path).startsWith(TEMP_PREFIX) && f.path.endsWith('verified.json'));

const vibsOf = async (out: string) => (await listFiles(out)).filter((f) => f.endsWith('.vib')).map((f) => join(out, f));

describe('esx mirror: what the verified state vouches for is on disk', () => {
  it('flushes the VIBs in one batch after they are renamed, every one before the state that vouches for it is saved', async () => {
    const out = join(base, 'fresh');
    const { flushes, restore } = await recordFlushes();
    try {
      const report = await mirrorEsx({ url, out, caPems });
      expect(report.ok).toBe(true);
    } finally {
      restore();
    }
    const state = lastStateFlush(flushes, out);
    expect(state).toBeGreaterThan(0);
    const vibs = await vibsOf(out);
    expect(vibs).toHaveLength(6);
    for (const vib of vibs) {
      // Flushed under its final name (after the rename: a new name, so a power cut can only lose it) ...
      const at = flushes.findIndex((f) => f.kind === 'datasync' && f.path === vib);
      expect(at, vib).toBeGreaterThanOrEqual(0);
      // ... and before the state that lists it is written.
      expect(at, vib).toBeLessThan(state);
    }
    // No VIB was flushed one by one under its partial name.
    expect(flushes.filter((f) => basename(f.path).startsWith(TEMP_PREFIX) && f.path.endsWith('.vib'))).toEqual([]);
  });

  it('flushes a VIB that replaces a file of the same name before the rename, so a power cut leaves one or the other whole', async () => {
    const out = join(base, 'stale');
    expect((await mirrorEsx({ url, out, caPems })).ok).toBe(true);
    const [stale] = await vibsOf(out);
    await writeFile(stale!, 'not the VIB');
    const { flushes, restore } = await recordFlushes();
    try {
      const report = await mirrorEsx({ url, out, caPems });
      expect(report.ok).toBe(true);
      expect(report.downloaded.map((d) => join(out, d.path))).toEqual([stale]);
    } finally {
      restore();
    }
    const partial = flushes.findIndex((f) => f.kind === 'datasync' && dirname(f.path) === dirname(stale!) && basename(f.path).startsWith(TEMP_PREFIX));
    expect(partial).toBeGreaterThanOrEqual(0);
    expect(partial).toBeLessThan(lastStateFlush(flushes, out));
    expect((await stat(stale!)).size).toBeGreaterThan(1000);
    expect((await readdir(dirname(stale!))).filter((n) => n.startsWith(TEMP_PREFIX))).toEqual([]);
  });

  it('Checkpoints.save flushes the files given to flushBeforeSave before it writes the state, and a file gone since is skipped', async () => {
    const dir = join(base, 'checkpoints');
    const file = join(dir, 'a.bin');
    await mkdir(dir, { recursive: true });
    await writeFile(file, 'data');
    const checkpoints = new Checkpoints(await VerifiedState.load(stateFileFor(dir)));
    await checkpoints.state.remember(file, '00');
    checkpoints.flushBeforeSave(file);
    checkpoints.flushBeforeSave(join(dir, 'gone.bin'));
    const { flushes, restore } = await recordFlushes();
    try {
      await checkpoints.save();
    } finally {
      restore();
    }
    const data = flushes.findIndex((f) => f.kind === 'datasync' && f.path === file);
    expect(data).toBeGreaterThanOrEqual(0);
    expect(data).toBeLessThan(lastStateFlush(flushes, dir));
  });
});
