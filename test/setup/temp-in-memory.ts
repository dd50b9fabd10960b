// Global set-up: the suite's temporary files (every tempDir, the test runs' depots, packs, logs) in a folder of
// its own on the machine's memory file system, /dev/shm, when it has one and TMPDIR names no other place.
// The suite writes and flushes about 2 GB; on the disk the older tests took 393 CPU s, against 371 here
// (docs/testing.md). The files stay real files behind the same system calls. The folder goes when the run ends, with
// whatever a failed test left in it.
import { constants } from 'node:fs';
import { access, chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DISK_TMPDIR, onTmpfs } from '../helpers/temp.js';

const SHM = '/dev/shm';

async function inMemory(dir: string): Promise<boolean> {
  try {
    await access(dir, constants.W_OK);
    return onTmpfs(dir);
  } catch {
    return false;
  }
}

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  if (process.env.TMPDIR || !(await inMemory(SHM))) return undefined;
  const dir = await mkdtemp(join(SHM, 'depotkit-test-'));
  // As /tmp is: the servers the tests start as their own users (nginx's, Apache's workers) and the tests that run
  // a command as another user reach their files under it.
  await chmod(dir, 0o1777);
  // Read by os.tmpdir() here, in the workers vitest starts after this, and in every process they start.
  process.env[DISK_TMPDIR] = tmpdir();
  process.env.TMPDIR = dir;
  return async () => {
    delete process.env.TMPDIR;
    delete process.env[DISK_TMPDIR];
    await rm(dir, { recursive: true, force: true });
  };
}
