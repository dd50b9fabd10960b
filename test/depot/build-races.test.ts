import { execFileSync, spawn } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildDepot } from '../../src/depot/build.js';
import { placeFile, stateFileFor } from '../../src/depot/place.js';
import { tempDir } from '../helpers/temp.js';
import { listFiles, sha256, vendorLikeSource } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(() => cleanup());

/**
 * A local writer in another process: rewrites each file in place, in a
 * bounded loop, with its own content and with the same bytes but the first
 * flipped, each write one page (a reader sees one or the other, never a mix).
 */
function startFlipper(files: string[]): Promise<{ stop: () => Promise<void> }> {
  const script = `
    const fs = require('node:fs');
    const files = JSON.parse(process.argv[1]).map((path) => {
      const good = fs.readFileSync(path);
      const bad = Buffer.from(good);
      bad[0] ^= 0xff;
      return { fd: fs.openSync(path, 'r+'), good, bad };
    });
    const pause = new Int32Array(new SharedArrayBuffer(4));
    for (let round = 0; round < 2e5; round++) {
      for (const f of files) fs.writeSync(f.fd, round % 2 ? f.bad : f.good, 0, f.good.length, 0);
      if (round === 0) process.stdout.write('ready\\n');
      // A flip every half millisecond or so: often enough between two reads of one file, without taking a core.
      Atomics.wait(pause, 0, 0, 0.5);
    }`;
  const child = spawn(process.execPath, ['-e', script, JSON.stringify(files)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  return new Promise((resolve, reject) => {
    child.stdout.once('data', () =>
      resolve({
        stop: async () => {
          child.kill('SIGKILL');
          await exited;
        },
      }),
    );
    child.once('error', reject);
  });
}

describe('depot build against a local writer', () => {
  it('places only bytes it hashed: each placed file has the catalog SHA-256, whatever the writer does', async () => {
    const src = await vendorLikeSource(dir);
    const sources = (await listFiles(src.binariesDir)).map((f) => join(src.binariesDir, f));
    const flipper = await startFlipper(sources);
    const outs = [join(dir, 'out-1'), join(dir, 'out-2')];
    const reports = [];
    try {
      for (const out of outs) reports.push(await buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out }));
    } finally {
      await flipper.stop();
    }
    const byPath = new Map(src.binaries.map((b) => [b.path, b.checksum]));
    let placed = 0;
    for (const [i, report] of reports.entries()) {
      // Each binary is either placed with the right bytes or reported with the wrong checksum it was read with.
      expect(report.placed.length + report.wrongChecksum.length).toBe(src.binaries.length);
      for (const entry of report.placed) {
        placed++;
        expect({ path: entry.path, sha256: sha256(await readFile(join(outs[i]!, entry.path))) }).toEqual({ path: entry.path, sha256: byPath.get(entry.path) });
      }
      const state = JSON.parse(await readFile(stateFileFor(outs[i]!), 'utf8')) as Record<string, { sha256: string }>;
      for (const [path, entry] of Object.entries(state)) expect(sha256(await readFile(path))).toBe(entry.sha256);
    }
    // The writer left the good content in place about half the time: some files were placed.
    expect(placed).toBeGreaterThan(0);
  });
});

describe('placeFile against a source swapped for something else', () => {
  it('refuses a source that is no longer a regular file (a FIFO), at once and without waiting for a writer', async () => {
    const fifo = join(dir, 'VMware-VCSA-all.iso');
    execFileSync('mkfifo', [fifo]);
    for (const mode of ['copy', 'hardlink', 'symlink'] as const) {
      await expect(placeFile(fifo, join(dir, `placed-${mode}`), mode, { sha256: sha256('x'), size: 1 })).rejects.toThrow(
        `${fifo} is no longer a regular file: refused.`,
      );
    }
    expect((await readdir(dir)).sort()).toEqual(['VMware-VCSA-all.iso']);
  });
});
