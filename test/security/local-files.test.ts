import { execFileSync } from 'node:child_process';
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadInventory } from '../../src/installer/inventory.js';
import { tempDir } from '../helpers/cli.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir('depotkit-local-files-')));
afterAll(() => cleanup());

describe('local files that are not what they seem', () => {
  it('an inventory that is a FIFO or a link to /dev/zero is refused at once: never waited on, never read whole', { timeout: 20_000 }, async () => {
    const fifo = join(dir, 'fifo.yaml');
    execFileSync('mkfifo', [fifo]);
    await expect(loadInventory(fifo)).rejects.toMatchObject({ exitCode: 2, message: `${fifo} is a FIFO, not a regular file: it is not a consumer inventory.` });
    const zero = join(dir, 'zero.yaml');
    await symlink('/dev/zero', zero);
    await expect(loadInventory(zero)).rejects.toMatchObject({
      exitCode: 2,
      message: `${zero} is a device, not a regular file: it is not a consumer inventory.`,
    });
  });
});
