import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEPOT_PATHS, TEMP_PREFIX } from '../../src/constants.js';
import { parseCatalog } from '../../src/depot/catalog.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { verifyDepot } from '../../src/depot/verify.js';
import { formatVerifyResult } from '../../src/cli/depot.js';
import { printLines } from '../../src/cli/output.js';
import { printed } from '../helpers/output.js';
import { tempDir } from '../helpers/temp.js';
import { vendorLikeSource } from '../depot/helpers.js';
import { depotBuild, expectOneSentence, listTree, renameFirstBinary } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(() => cleanup());

/** Names no depot file can have, and the reason the refusal gives. */
const BAD_NAMES: [name: string, reason: RegExp][] = [
  // Placed, it would be taken for a temporary file and removed by prune and unpack.
  [`${TEMP_PREFIX}0123456789ab-VMware-VCSA-all-9.0.0.0.iso`, /whose file name starts with '\.': refused\./],
  ['.VMware-VCSA-all-9.0.0.0.iso', /whose file name starts with '\.': refused\./],
  ['.', /whose file name starts with '\.': refused\./],
  ['..', /whose file name starts with '\.': refused\./],
  ['../VMware-VCSA.iso', /whose file name (holds a slash|starts with '\.'): refused\./],
  ['COMP/VMware-VCSA.iso', /whose file name holds a slash: refused\./],
  ['VMware\\VCSA.iso', /whose file name holds a slash: refused\./],
  ['VMware-VCSA\u0000.iso', /whose file name holds control characters: refused\./],
  [`${'x'.repeat(252)}.iso`, /whose file name is longer than 255 bytes: refused\./],
  // 128 characters, 256 bytes: the limit is in bytes.
  ['é'.repeat(128), /whose file name is longer than 255 bytes: refused\./],
];

describe('catalog file names that cannot be a depot file', () => {
  it('the catalog reader refuses each with one sentence, and takes the longest name that fits', async () => {
    const root = join(dir, 'depot');
    await makeDemoDepot(root, { binarySize: 16 });
    for (const [name, reason] of BAD_NAMES) {
      await renameFirstBinary(root, name);
      const text = await readFile(join(root, DEPOT_PATHS.catalog), 'utf8');
      expect(() => parseCatalog(text), JSON.stringify(name)).toThrow(reason);
    }
    for (const name of [`${'x'.repeat(251)}.iso`, `${'é'.repeat(127)}x`, 'VMware-VCSA..iso', 'a.b']) {
      await renameFirstBinary(root, name);
      const text = await readFile(join(root, DEPOT_PATHS.catalog), 'utf8');
      expect(() => parseCatalog(text), name).not.toThrow();
    }
  });

  it('depot verify reports each as catalog.file-name.invalid', async () => {
    const root = join(dir, 'depot');
    await makeDemoDepot(root, { binarySize: 16 });
    for (const [name, reason] of BAD_NAMES) {
      await renameFirstBinary(root, name);
      const result = await verifyDepot(root);
      const finding = result.findings.find((f) => f.id.startsWith('catalog.'));
      expect({ name, id: finding?.id }).toEqual({ name, id: 'catalog.file-name.invalid' });
      expect(finding!.message).toMatch(reason);
      expect(result.ok).toBe(false);
    }
    await renameFirstBinary(root, BAD_NAMES[0]![0]);
    // As depot verify prints it (and exits 1: not ok).
    const result = await verifyDepot(root);
    expect(result.ok).toBe(false);
    expect(printed(() => printLines(formatVerifyResult(result))).stdout).toMatch(
      /^ERROR catalog\.file-name\.invalid: .*names the \w+ binary "\.depotkit-tmp-.*" \(bundle .*\) whose file name starts with '\.': refused\.$/m,
    );
  });

  it('depot build refuses each with exit 2 and one sentence, before writing anything', async () => {
    const src = await vendorLikeSource(dir, 512);
    const out = join(dir, 'out');
    for (const [name, reason] of BAD_NAMES) {
      await renameFirstBinary(src.metadataDir, name);
      const r = await depotBuild({ metadata: src.metadataDir, binaries: [src.binariesDir], out });
      expectOneSentence(r, 2, reason);
      expect(await listTree(out)).toEqual([]);
    }
  });
});
