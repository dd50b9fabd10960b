import { readlinkSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { tmpdir } from 'node:os';

export interface Flush {
  kind: 'sync' | 'datasync';
  /** What the handle names at the time of the call, as the kernel tells it. */
  path: string;
}

/**
 * Records every fsync and fdatasync made through a FileHandle, in order (the real calls still run),
 * until `restore` is called.
 */
export async function recordFlushes(): Promise<{ flushes: Flush[]; restore: () => void }> {
  const probe = await open(tmpdir(), 'r');
  const proto = Object.getPrototypeOf(probe) as FileHandle;
  await probe.close();
  const flushes: Flush[] = [];
  const original = { sync: proto.sync, datasync: proto.datasync };
  for (const kind of ['sync', 'datasync'] as const) {
    proto[kind] = function (this: FileHandle) {
      flushes.push({ kind, path: readlinkSync(`/proc/self/fd/${this.fd}`) });
      return original[kind].call(this);
    };
  }
  return { flushes, restore: () => Object.assign(proto, original) };
}
