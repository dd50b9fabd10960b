// What an interrupted demo run removes from a signal handler: its temporary files, wherever it writes them.
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { TEMP_PREFIX } from '../../src/constants.js';
import { removeDemoLeftoversSync } from '../../src/depot/demo.js';
import { tempDir } from '../helpers/temp.js';

let cleanup: (() => Promise<void>) | undefined;
afterAll(() => cleanup?.());

it('removes the temporary files of the tree and of the unfinished mark, and keeps the mark and everything else', async () => {
  const t = await tempDir();
  cleanup = t.cleanup;
  const comp = join(t.dir, 'PROD', 'COMP', 'VCENTER');
  await mkdir(comp, { recursive: true });
  await mkdir(join(t.dir, '.depotkit'));
  // A signal can come while the mark itself is being written through its temporary name.
  for (const file of [
    join(comp, `${TEMP_PREFIX}1-a.iso`),
    join(comp, 'b.iso'),
    join(t.dir, '.depotkit', `${TEMP_PREFIX}2-demo-unfinished`),
    join(t.dir, '.depotkit', 'demo-unfinished'),
  ])
    await writeFile(file, 'x');
  removeDemoLeftoversSync(t.dir);
  expect((await readdir(t.dir, { recursive: true })).map(String).sort()).toEqual(
    ['.depotkit', '.depotkit/demo-unfinished', 'PROD', 'PROD/COMP', 'PROD/COMP/VCENTER', 'PROD/COMP/VCENTER/b.iso'].sort(),
  );
});
