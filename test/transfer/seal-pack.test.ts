import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import type { PackReport } from '../../src/transfer/pack.js';
import type { UnpackReport } from '../../src/transfer/unpack.js';
import { runCli } from '../helpers/cli.js';
import { demo, demoFixture, sha256, treeOf } from './helpers.js';
import { packIn, unpackIn as unpack, unpackText } from './in-process.js';
import { copyPack, readManifest, writeManifest } from './tamper.js';

const BINARY = 32 * 1024;
const CODE = '[0-9A-HJKMNP-TV-Z]{5}(?:-[0-9A-HJKMNP-TV-Z]{5}){4}';

let packDir: string;
let packed: PackReport;

const pem = (path: string) => readFile(path, 'utf8');

const fx = demoFixture('depotkit-seal-', BINARY);

beforeAll(async () => {
  packDir = join(fx.base, 'pack');
  const res = await packIn(fx.depot, packDir, { signingKeyPem: await pem(join(fx.base, 'depot-signing', 'signing-key.pem')) });
  expect(res.code).toBe(0);
  packed = res.report;
});

describe('the seal and the signature of a pack', () => {
  it('pack ends with the seal (and --json with the full SHA-256s), writes it on no medium, and to --seal-out only outside --out', async () => {
    expect(packed.seal).toMatch(new RegExp(`^catalog ${CODE} manifest ${CODE}$`));
    expect(packed.catalogSha256).toBe(sha256(await readFile(join(fx.depot, DEPOT_PATHS.catalog))));
    expect(packed.manifestSha256).toBe(sha256(await readFile(join(packDir, 'depot-pack.json'))));
    const [catalogCode, manifestCode] = [packed.seal.split(' ')[1]!, packed.seal.split(' ')[3]!];
    for (const name of await readdir(packDir)) {
      const text = await readFile(join(packDir, name), 'latin1');
      expect(text).not.toContain(catalogCode);
      expect(text).not.toContain(manifestCode);
    }
    const human = await runCli(['depot', 'pack', fx.depot, '--out', fx.fresh('pack'), '--volume-size', '256K']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`^Seal: catalog ${CODE} manifest ${CODE}$`, 'm'));

    const out = fx.fresh('pack');
    const inside = await packIn(fx.depot, out, { sealFile: join(out, 'seal.txt') });
    expect(inside.code).toBe(2);
    expect(inside.stderr).toContain('the seal must travel apart from the media it vouches for');
    expect(existsSync(out)).toBe(false);
    const sealFile = fx.fresh('seal.txt');
    const apart = await packIn(fx.depot, fx.fresh('pack'), { sealFile });
    expect(apart.code).toBe(0);
    expect(await readFile(sealFile, 'utf8')).toBe(`${apart.report.seal}\n`);
    expect(apart.report.sealFile).toBe(sealFile);
  });

  it('unpack --expect: the seal given lets the pack in; media whose catalog and binaries were both replaced, or whose manifest changed, are refused before anything is placed (exit 1)', async () => {
    const out = fx.fresh('out');
    const good = await unpack([packDir], out, { expect: packed.seal.toLowerCase() });
    expect(good.code).toBe(0);
    expect(good.report.vouchedBy).toBe('seal');
    expect(await treeOf(out)).toEqual(await treeOf(fx.depot));

    // A coherent pack of another depot: its checksums, its manifest, its catalog and binaries all agree.
    const other = await demo(fx.fresh('other'), BINARY);
    const forged = fx.fresh('forged');
    expect((await packIn(other, forged)).code).toBe(0);
    const refusedOut = fx.fresh('out');
    const swapped = await unpack([forged], refusedOut, { expect: packed.seal });
    expect(swapped.code).toBe(1);
    expect(swapped.stderr).toContain("The pack's catalog does not match the seal given: these media are not the pack the seal was made for, or were altered");
    expect(existsSync(refusedOut)).toBe(false);

    const edited = await copyPack(packDir, fx.fresh('edited'));
    const m = await readManifest(edited);
    m.created = new Date(0).toISOString();
    await writeManifest(edited, m);
    const changed = await unpack([edited], refusedOut, { expect: packed.seal });
    expect(changed.code).toBe(1);
    expect(changed.stderr).toContain("The pack's manifest (depot-pack.json) does not match the seal given");
    expect(existsSync(refusedOut)).toBe(false);

    // Without a seal or a signature the media vouch for themselves, and the report says so.
    const alone = await unpack([forged], fx.fresh('out'));
    expect(alone.code).toBe(0);
    expect(alone.report.vouchedBy).toBe('media');
    const human = unpackText(alone.report);
    expect(human).toContain('The media vouched for themselves (no --expect seal or --pack-signing-cert given)');
    expect(human).toContain(alone.report.seal);
  });

  it('pack --signing-key signs the manifest into depot-pack.json.sig; unpack --pack-signing-cert holds the manifest to it before anything is placed', async () => {
    expect(packed.signature?.path).toBe(join(packDir, 'depot-pack.json.sig'));
    expect(execFileSync('sha256sum', ['-c', 'SHA256SUMS'], { cwd: packDir, encoding: 'utf8' })).toContain('depot-pack.json.sig: OK');
    const cert = await pem(join(fx.base, 'depot-signing', 'signing-public.pem'));
    const good = await unpack([packDir], fx.fresh('out'), { packSigningCertPem: cert });
    expect(good.code).toBe(0);
    expect(good.report.vouchedBy).toBe('signature');
    // The command line's flags for both, once.
    const certFile = join(fx.base, 'depot-signing', 'signing-public.pem');
    const cli = await runCli(['depot', 'unpack', packDir, '--out', fx.fresh('out'), '--expect', packed.seal, '--pack-signing-cert', certFile, '--json']);
    expect(cli.code).toBe(0);
    expect((JSON.parse(cli.stdout) as UnpackReport).vouchedBy).toBe('seal+signature');

    const out = fx.fresh('out');
    const edited = await copyPack(packDir, fx.fresh('edited'));
    const m = await readManifest(edited);
    m.created = new Date(0).toISOString();
    await writeManifest(edited, m);
    const changed = await unpack([edited], out, { packSigningCertPem: cert });
    expect(changed.code).toBe(1);
    expect(changed.stderr).toContain('the manifest was changed after it was signed');
    expect(existsSync(out)).toBe(false);

    const unsigned = await copyPack(packDir, fx.fresh('unsigned'));
    await rm(join(unsigned, 'depot-pack.json.sig'));
    const bare = await unpack([unsigned], out, { packSigningCertPem: cert });
    expect(bare.code).toBe(1);
    expect(bare.stderr).toContain('The media carry no depot-pack.json.sig beside depot-pack.json, and a signed pack was asked for');

    const stranger = fx.fresh('stranger');
    await demo(stranger, 0);
    const strangerCert = await pem(`${stranger}-signing/signing-public.pem`);
    const other = await unpack([packDir], out, { packSigningCertPem: strangerCert });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('depot-pack.json was signed by another key than the one given');
    expect(existsSync(out)).toBe(false);

    const rsa = fx.fresh('rsa.pem');
    await writeFile(rsa, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const wrongKey = await runCli(['depot', 'pack', fx.depot, '--out', fx.fresh('pack'), '--signing-key', rsa]);
    expect(wrongKey.code).toBe(2);
    expect(wrongKey.stderr).toContain('The signing key is not an ECDSA P-256 key');
  });
});
