import { spawnSync } from 'node:child_process';
import { mkdir, open, readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CA_CERT_FILE, CA_KEY_FILE, SERVER_CERT_FILE } from '../../src/cert/files.js';
import { DepotkitError, EXIT, describeFsError } from '../../src/util/errors.js';
import { isTempName } from '../../src/util/fs.js';
import { MAX_COMMON_NAME_LENGTH, MIN_PASSPHRASE_LENGTH, PEM_LIMITS, SECRET_FILE_MAX_BYTES } from '../../src/util/limits.js';
import { readSecret } from '../../src/util/secrets.js';
import { assertNewPassphrase, createCa, issueCert, lintServerCertificate, readCaPems, readPemBlocks, writeCaDir } from '../../src/cert/index.js';
import { runCli } from '../helpers/cli.js';
import { runMain } from '../cli/in-process.js';
import { refusal } from '../helpers/output.js';
import { tempDir } from '../helpers/temp.js';
import { openssl } from '../cert/openssl.js';
import { vendorLikeSource } from '../depot/helpers.js';
import { canMountTmpfs, expectOneSentence, listTree, runCliOnTmpfs } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
let caDir: string;
let leafPem: string;
let caPem: string;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  caDir = join(dir, 'ca');
  await makeCaDir(caDir);
  await issueCert(join(dir, 'srv'), { caDir, dns: ['depot.lab'] });
  leafPem = await readFile(join(dir, 'srv', SERVER_CERT_FILE), 'utf8');
  caPem = await readFile(join(caDir, CA_CERT_FILE), 'utf8');
});
afterAll(() => cleanup());

/** A CA folder as `cert ca --key-size 2048` writes it. */
async function makeCaDir(out: string, opts: { cn?: string; passphrase?: string } = {}): Promise<void> {
  await writeCaDir(out, await createCa({ cn: opts.cn, keySize: 2048 }), { passphrase: opts.passphrase });
}

/** cert inspect's reading of a certificate file: a chain of at most PEM_LIMITS.maxChainCertificates. */
const readChain = (file: string) =>
  readPemBlocks(file, ['CERTIFICATE', 'CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST'], {
    maxBlocks: PEM_LIMITS.maxChainCertificates,
    what: 'certificate chain',
  });

/** A valid DNS name of `length` characters (labels stay under 64). */
function longDnsName(length: number): string {
  const tail = '.lab';
  const body = length - tail.length;
  const first = 'a'.repeat(Math.min(60, body));
  const rest = body - first.length;
  return rest > 0 ? `${first}.${'b'.repeat(rest - 1)}${tail}` : `${first}${tail}`;
}

describe('common names longer than X.509 allows', () => {
  it('cert ca --cn over 64 characters is refused with one sentence, and nothing is written; 64 fit and openssl reads them', async () => {
    const out = join(dir, 'long-cn-ca');
    const r = await refusal(makeCaDir(out, { cn: 'C'.repeat(MAX_COMMON_NAME_LENGTH + 1) }));
    expectOneSentence(
      r,
      2,
      /^depotkit: The CA common name "C{65}" has 65 characters; a certificate's CN holds at most 64 \(X\.509 ub-common-name\), and openssl refuses longer ones too\.$/m,
    );
    expect(await listTree(out)).toEqual([]);

    const fits = join(dir, 'cn64');
    await makeCaDir(fits, { cn: 'C'.repeat(64) });
    expect(openssl(['x509', '-in', join(fits, CA_CERT_FILE), '-noout', '-subject']).stdout.trim()).toBe(`subject=CN = ${'C'.repeat(64)}`);
  });

  it('cert issue with only a DNS name too long for a CN is refused, naming what to add', async () => {
    const long = longDnsName(70);
    const out = join(dir, 'long-dns');
    const r = await refusal(issueCert(out, { caDir, dns: [long] }));
    expectOneSentence(r, 2, new RegExp(`The DNS name "${long.replace(/\./g, '\\.')}" has 70 characters; a certificate's CN holds at most 64`));
    expect(r.stderr).toMatch(/Add a shorter name with another --dns .* the long name stays in the SAN/);
    expect(await listTree(out)).toEqual([]);
  });

  it('cert issue with a long first --dns and a short one: the short one is the CN, both are in the SAN, with a warning', async () => {
    const long = longDnsName(70);
    const out = join(dir, 'long-and-short');
    const { warnings } = await issueCert(out, { caDir, dns: [long, 'depot.lab'] });
    // cert issue prints each as a `warning: ` line.
    expect(warnings).toContainEqual(
      expect.stringMatching(new RegExp(`^${long.replace(/\./g, '\\.')} is longer than a CN may be \\(64 characters\\), so the CN is depot\\.lab`)),
    );
    const cert = join(out, SERVER_CERT_FILE);
    expect(openssl(['x509', '-in', cert, '-noout', '-subject']).stdout.trim()).toBe('subject=CN = depot.lab');
    expect(openssl(['x509', '-in', cert, '-noout', '-ext', 'subjectAltName']).stdout).toContain(`DNS:${long}, DNS:depot.lab`);
    expect(openssl(['verify', '-x509_strict', '-CAfile', join(caDir, CA_CERT_FILE), cert]).code).toBe(0);
  });
});

describe('CA key passphrases', () => {
  it(`a passphrase under ${MIN_PASSPHRASE_LENGTH} characters is refused before any key is made, from a file or the environment`, async () => {
    const file = join(dir, 'short-pass');
    await writeFile(file, 'short\n');
    const out = join(dir, 'short-pass-ca');
    const r = await runCli(['cert', 'ca', '--out', out, '--key-size', '2048', '--passphrase-file', file]);
    expectOneSentence(r, 2, /The passphrase has 5 characters; a CA key's passphrase needs at least 8\./);
    expect(r.stderr).not.toContain('short\n');
    expect(await listTree(out)).toEqual([]);
    // The variable is read as the file is (readSecret); the same check follows.
    vi.stubEnv('DK_PASS', '1234567');
    try {
      const fromEnv = () => readSecret({ env: 'DK_PASS' }, 'CA key passphrase');
      expectOneSentence(await refusal(async () => assertNewPassphrase(await fromEnv())), 2, /has 7 characters/);
      vi.stubEnv('DK_PASS', '12345678');
      const passphrase = await fromEnv();
      assertNewPassphrase(passphrase);
      await makeCaDir(out, { passphrase });
      expect(await listTree(out)).toEqual([CA_CERT_FILE, CA_KEY_FILE]);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe('certificate files of thousands of certificates', () => {
  const chainOf = (count: number) => leafPem + caPem.repeat(count - 1);

  it('cert inspect refuses a chain file of 1000 certificates at once (lint against another CA used to walk it for seconds to minutes)', async () => {
    const file = join(dir, 'chain1000.pem');
    await writeFile(file, chainOf(1000));
    const other = join(dir, 'other-ca');
    await makeCaDir(other);
    // The CLI's main in this process: cert inspect's refusal as printed, without a process of its own.
    const r = await runMain(['cert', 'inspect', file, '--ca', other]);
    expectOneSentence(r, 2, new RegExp(`holds 1000 PEM blocks, more than the ${PEM_LIMITS.maxChainCertificates} depotkit reads from a certificate chain\\.`));
    expect(r.stderr).toMatch(/a trust bundle goes to --ca/);
  });

  it('cert issue --ca refuses a CA folder whose certificate file holds thousands of certificates', async () => {
    const bigCa = join(dir, 'big-ca');
    await makeCaDir(bigCa);
    const own = await readFile(join(bigCa, CA_CERT_FILE), 'utf8');
    await writeFile(join(bigCa, CA_CERT_FILE), own.repeat(2000));
    const out = join(dir, 'from-big-ca');
    const r = await refusal(issueCert(out, { caDir: bigCa, dns: ['depot.lab'] }));
    expectOneSentence(r, 2, /ca-cert\.pem holds 2000 PEM blocks, more than the 32 depotkit reads from a certificate chain\./);
    expect(await listTree(out)).toEqual([]);
  });

  it('a real chain and a system-sized trust bundle (150 certificates) still work', async () => {
    const chain = join(dir, 'chain2.pem');
    await writeFile(chain, chainOf(2));
    const bundle = join(dir, 'bundle.pem');
    await writeFile(bundle, caPem.repeat(150));
    const certs = (await readChain(chain)).map((b) => b.pem);
    expect(certs).toHaveLength(2);
    const caPems = await readCaPems([bundle]);
    expect(caPems).toHaveLength(150);
    // No finding: cert inspect prints "Lint: no problems for depot.lab." and exits 0.
    expect(lintServerCertificate(certs.join(''), { host: 'depot.lab', ips: [], caPems })).toEqual([]);
  });

  it('a device given as a certificate is refused unread, a huge file after 4 MiB, not read whole', async () => {
    expectOneSentence(await refusal(readChain('/dev/zero')), 2, /\/dev\/zero is a device, not a regular file: it is not a PEM file\./);
    const huge = join(dir, 'huge.pem');
    await writeFile(huge, '');
    await truncate(huge, 5 * 1024 ** 2);
    expectOneSentence(await refusal(readChain(huge)), 2, /huge\.pem is larger than 4 MiB: it is not a PEM file\./);
  });
});

describe('password and passphrase files', () => {
  it('--passphrase-file /dev/zero is refused after a few KiB', async () => {
    const r = await refusal(readSecret({ file: '/dev/zero' }, 'CA key passphrase'));
    expectOneSentence(r, 2, new RegExp(`/dev/zero has no line end in its first ${SECRET_FILE_MAX_BYTES} bytes: it is not a password file\\.`));
  });

  it('only the first line is read: a pipe that never ends still gives its first line', async () => {
    const fifo = join(dir, 'pipe');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const secret = readSecret({ file: fifo }, 'password');
    const writer = await open(fifo, 'w');
    try {
      await writer.write('first line\nsecond line\n');
      // The writer stays open: a reader that waits for the end would wait forever.
      expect(await secret).toBe('first line');
    } finally {
      await writer.close();
    }
  });

  it('keeps the first line as before (CRLF too) and refuses an overlong one', async () => {
    const crlf = join(dir, 'crlf');
    await writeFile(crlf, `pass word\r\nignored\n${'x'.repeat(10_000)}`);
    expect(await readSecret({ file: crlf }, 'password')).toBe('pass word');
    const noEol = join(dir, 'no-eol');
    await writeFile(noEol, 'no line end');
    expect(await readSecret({ file: noEol }, 'password')).toBe('no line end');
    const long = join(dir, 'long');
    await writeFile(long, 'y'.repeat(SECRET_FILE_MAX_BYTES + 10));
    await expect(readSecret({ file: long }, 'password')).rejects.toThrow(/has no line end in its first 4096 bytes/);
  });
});

describe('a full disk is the environment: exit 3, one sentence, no partial file at a final path', () => {
  it('ENOSPC and EDQUOT map to exit 3', () => {
    for (const code of ['ENOSPC', 'EDQUOT']) {
      const err = describeFsError(Object.assign(new Error(code), { code }), '/x/y');
      expect(err).toBeInstanceOf(DepotkitError);
      expect(err.exitCode).toBe(EXIT.environment);
    }
    expect(EXIT.environment).toBe(3);
  });

  describe.skipIf(!canMountTmpfs)('on a real full file system (a small tmpfs in a private mount namespace)', () => {
    let mnt: string;
    beforeAll(async () => {
      mnt = join(dir, 'mnt');
      await mkdir(mnt);
    });

    it('cert ca: exit 3 and no half CA folder (before: exit 1 and a key without its certificate)', async () => {
      const r = await runCliOnTmpfs(mnt, '4k', ['cert', 'ca', '--out', join(mnt, 'ca'), '--key-size', '2048']);
      expectOneSentence(
        r,
        3,
        /^depotkit: No space left on the device while writing .*\/ca\/ca-(key|cert)\.pem\.\n {2}Free some space and run the command again/,
      );
      expect(r.tree).toEqual(['ca']);
    });

    it('cert issue --force: exit 3 and the old key and certificate untouched', async () => {
      const before = 'mkdir -p "$M/srv" && cp -p "$S"/* "$M/srv"/';
      const r = await runCliOnTmpfs(
        mnt,
        '12k',
        // A 2048-bit key: the child makes its key for real, and the size is not what is tested.
        ['cert', 'issue', '--ca', caDir, '--dns', 'depot.lab', '--key-size', '2048', '--out', join(mnt, 'srv'), '--force'],
        before.replace(/\$M/g, mnt).replace(/\$S/g, join(dir, 'srv')),
      );
      expectOneSentence(r, 3, /No space left on the device while writing/);
      expect(r.tree.filter((f) => isTempName(f.split('/').pop()!) || f.endsWith('.bak'))).toEqual([]);
      expect(r.tree).toEqual(['srv', 'srv/server-cert.pem', 'srv/server-chain.pem', 'srv/server-key.pem']);
    });

    it('depot demo: exit 3, no temporary file left', async () => {
      const r = await runCliOnTmpfs(mnt, '16k', ['depot', 'demo', join(mnt, 'demo'), '--binary-size', '1k']);
      expectOneSentence(r, 3, /No space left on the device while writing .*demo\/PROD\//);
      expect(r.tree.filter((f) => isTempName(f.split('/').pop()!))).toEqual([]);
    });

    it('depot build: exit 3, no temporary file left', async () => {
      const src = await vendorLikeSource(join(dir, 'build-src'), 1024);
      const r = await runCliOnTmpfs(mnt, '16k', ['depot', 'build', '--metadata', src.metadataDir, '--binaries', src.binariesDir, '--out', join(mnt, 'out')]);
      expectOneSentence(r, 3, /The build needs \d+ bytes .* in .*out but its file system has \d+ bytes .* free; nothing was written\./);
      expect(r.tree.filter((f) => isTempName(f.split('/').pop()!))).toEqual([]);
    });
  });
});
