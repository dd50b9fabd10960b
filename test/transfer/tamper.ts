import { type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { PackFile, PackManifest } from '../../src/transfer/format.js';
import { type UnpackReport, unpackDepot } from '../../src/transfer/unpack.js';
import { spawnCli } from '../helpers/cli.js';
import { sha256 } from './helpers.js';

/**
 * What an attacker with the media in hand does: change the volumes and the
 * manifest and make the checksums agree again, so that the pack is coherent
 * and only what travelled apart from it (the catalog as authority, a seal, a
 * signature) can tell.
 */

export async function copyPack(from: string, to: string): Promise<string> {
  await cp(from, to, { recursive: true });
  return to;
}

export async function readManifest(dir: string): Promise<PackManifest> {
  return JSON.parse(await readFile(join(dir, 'depot-pack.json'), 'utf8')) as PackManifest;
}

/** SHA256SUMS made again for every file it names, as a careful attacker leaves it. */
export async function resum(dir: string): Promise<void> {
  const names = (await readFile(join(dir, 'SHA256SUMS'), 'utf8').catch(() => ''))
    .split('\n')
    .map((l) => l.slice(66))
    .filter(Boolean);
  const lines: string[] = [];
  for (const name of names.length ? names : await readdir(dir)) lines.push(`${sha256(await readFile(join(dir, name)))}  ${name}\n`);
  await writeFile(join(dir, 'SHA256SUMS'), lines.join(''));
}

/** Writes the manifest (pretty, as pack does) and makes SHA256SUMS agree. */
export async function writeManifest(dir: string, manifest: PackManifest): Promise<void> {
  await writeFile(join(dir, 'depot-pack.json'), `${JSON.stringify(manifest, null, 1)}\n`);
  await resum(dir);
}

/** Puts `data` in place of a file's bytes in its volumes, and the volumes' new SHA-256 in the manifest. */
export async function replaceBytes(dir: string, manifest: PackManifest, file: PackFile, data: Buffer): Promise<void> {
  for (const piece of file.pieces) {
    const volume = manifest.volumes[piece.volume - 1]!;
    const bytes = await readFile(join(dir, volume.name));
    data.copy(bytes, piece.dataOffset, piece.fileOffset, piece.fileOffset + piece.length);
    await writeFile(join(dir, volume.name), bytes);
    volume.sha256 = sha256(bytes);
  }
}

export interface Unpacked {
  code: number;
  report: UnpackReport;
  stdout: string;
  stderr: string;
}

const running = new Set<ChildProcess>();

/** Stops any unpack still running when a test gave up on it (one that hung on a FIFO). */
export function stopLeftovers(): void {
  for (const child of running) child.kill('SIGKILL');
}

/** Runs the built CLI as runCli does, keeping the child so that stopLeftovers can end it. */
function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawnCli(args);
    running.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      running.delete(child);
      resolvePromise({ code: code ?? -1, stdout, stderr });
    });
  });
}

export async function unpack(media: string[], out: string, extra: string[] = []): Promise<Unpacked> {
  const res = await run(['depot', 'unpack', ...media, '--out', out, ...extra, '--json']);
  let report = undefined as unknown as UnpackReport;
  try {
    report = JSON.parse(res.stdout) as UnpackReport;
  } catch {
    // No report: refused before unpacking (stderr says why).
  }
  return { code: res.code, report, stdout: res.stdout, stderr: res.stderr };
}

/**
 * A copy of the pack at `from` whose first VIB is the attacker's (as many bytes, all 'A'), with the manifest,
 * its volumes' SHA-256 and SHA256SUMS made to agree with it: only the ESX metadata can tell. Returns the copy
 * and the VIB's entry.
 */
export async function packWithForeignVib(from: string, to: string): Promise<{ dir: string; vib: PackFile }> {
  const dir = await copyPack(from, to);
  const manifest = await readManifest(dir);
  const vib = manifest.files.find((f) => f.kind === 'esx-vib')!;
  const other = Buffer.alloc(vib.size, 0x41);
  await replaceBytes(dir, manifest, vib, other);
  vib.sha256 = sha256(other);
  await writeManifest(dir, manifest);
  return { dir, vib };
}

/**
 * Unpacks a copy of `from`'s pack whose first VIB holds other bytes (packWithForeignVib: media made coherent
 * again) into `out`, and asserts what any pack's unpack must do with it: that VIB refused and not placed.
 */
export async function unpackForeignVib(from: string, media: string, out: string): Promise<{ dir: string; report: UnpackReport }> {
  const { dir, vib } = await packWithForeignVib(from, media);
  const report = await unpackDepot({ media: [dir], out });
  expect(report.ok).toBe(false);
  expect(report.failed.find((f) => f.path === vib.path)?.reason).toBe("its SHA-256 in the manifest is not its metadata's");
  expect(existsSync(join(out, vib.path))).toBe(false);
  return { dir, report };
}
