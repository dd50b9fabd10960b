import { cp, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { buildDepot } from '../../src/depot/build.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { verifyDepot } from '../../src/depot/verify.js';
import { DepotkitError } from '../../src/util/errors.js';
import { measure } from '../../scripts/arch/shape.js';
import { REPO_ROOT, tempDir } from '../helpers/temp.js';
import { onTheCommandLine } from '../check/words.js';
import { readCatalogBinaries } from './helpers.js';

// The depot's library names options and operations by their library names; the command line shows the
// flags and commands it always showed. The expected lines are its words from before, verbatim.
let base: string;
let cleanup: () => Promise<void>;
let pristine: string;

beforeAll(async () => {
  ({ dir: base, cleanup } = await tempDir());
  pristine = join(base, 'pristine');
  await makeDemoDepot(pristine, { binarySize: 1024 });
});
afterAll(() => cleanup());

const fixOf = async (dir: string, id: string, options = {}) => {
  const finding = (await verifyDepot(dir, options)).findings.find((f) => f.id === id);
  expect(finding, id).toBeDefined();
  return { message: onTheCommandLine(finding!.message), fix: onTheCommandLine(finding!.fix) };
};

describe("the depot's words on the command line", () => {
  it('no flag is spelt in the library of depot nor in the status data but its command-line table', () => {
    const flags = measure(REPO_ROOT).flagStrings.filter((f) => /^src\/(depot\/|server\/status)/.test(f.file));
    expect(flags.filter((f) => f.file !== 'src/server/status/command-lines.ts')).toEqual([]);
  });

  it("verify's fixes name depot build with the flag they need, and the signing certificate's flag", async () => {
    const dir = join(base, 'broken');
    await cp(pristine, dir, { recursive: true });
    const [binary] = await readCatalogBinaries(dir);
    await rm(join(dir, binary!.path));
    await rm(join(dir, DEPOT_PATHS.manifest));
    // The whole command, with the depot it builds: depot build needs all three.
    expect((await fixOf(dir, 'binary.missing')).fix).toBe(
      `Download it and run depotkit depot build --metadata <zip-or-dir> --binaries <folder> --out ${dir} again.`,
    );
    expect((await fixOf(dir, 'layout.file.missing')).fix).toBe(
      `Lay out the vendor's whole metadata archive with depotkit depot build --metadata <zip> --binaries <folder> --out ${dir} (download it again if it lacks this file).`,
    );
    expect((await fixOf(pristine, 'signature.unverified')).message).toBe(
      'The catalog carries a depotkit signature; give its signing certificate (--signing-cert) to verify it.',
    );
    const empty = join(base, 'empty');
    await mkdir(join(empty, 'not-a-depot'), { recursive: true });
    expect((await fixOf(empty, 'layout.root.missing')).fix).toBe(
      'Point at the folder that contains PROD/; to make one, use depotkit depot build (or depotkit depot demo for a lab).',
    );
  });

  it('build without a folder of binaries names --binaries', async () => {
    const err = await buildDepot({ metadata: pristine, binaries: [], out: join(base, 'built') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DepotkitError);
    expect(onTheCommandLine((err as DepotkitError).message)).toBe('Give at least one folder of binaries (--binaries).');
  });
});
