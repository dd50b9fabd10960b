import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFile, readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CA_CERT_FILE, CA_KEY_FILE, SERVER_CERT_FILE, SERVER_CHAIN_FILE, SERVER_KEY_FILE } from '../../src/cert/files.js';
import { createCa, issueCert, issueServerCert, writeCaDir, type CaMaterial, type ServerMaterial } from '../../src/cert/index.js';
import { exists } from '../../src/util/fs.js';
import { refusal } from '../helpers/output.js';
import { tempDir } from '../helpers/temp.js';
import { DIST, expectOneSentence, runNodeScript } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(() => cleanup());

/** The pairs each test writes and replaces, made once: the faults are in the writing, not in the making. */
let material: { oldCa: CaMaterial; newCa: CaMaterial; oldServer: ServerMaterial; newServer: ServerMaterial };
beforeAll(async () => {
  const [oldCa, newCa] = await Promise.all([createCa({ cn: 'Old CA', keySize: 2048 }), createCa({ cn: 'New CA', keySize: 2048 })]);
  const [oldServer, newServer] = await Promise.all([issueServerCert(oldCa, { dns: ['old.lab'] }), issueServerCert(oldCa, { dns: ['new.lab'] })]);
  material = { oldCa, newCa, oldServer, newServer };
});

type Fault = { op: 'rename' | 'rm'; nth: number; action: 'crash' | 'fail' };

/**
 * A child process that writes a CA (or server) folder, then replaces it with
 * --force while a fault is injected below depotkit, in Node's own fs module:
 * on the nth rename of a new file onto a final name (or the nth removal of a
 * `.bak` file), the process is killed (SIGKILL: no clean-up code runs) or the
 * call fails with EIO. The same fault hits the old code and the new.
 */
function replaceWithFault(kind: 'ca' | 'server', target: string, fault: Fault) {
  const finals = kind === 'ca' ? [CA_KEY_FILE, CA_CERT_FILE] : [SERVER_KEY_FILE, SERVER_CERT_FILE, SERVER_CHAIN_FILE];
  return runNodeScript(`
    import { createRequire, syncBuiltinESMExports } from 'node:module';
    import { basename } from 'node:path';
    import { writeFileSync } from 'node:fs';
    const fsp = createRequire(import.meta.url)('node:fs/promises');
    const finals = new Set(${JSON.stringify(finals)});
    const fault = ${JSON.stringify(fault)};
    let armed = false;
    let count = 0;
    const strike = () => {
      if (fault.action === 'crash') process.kill(process.pid, 'SIGKILL');
      throw Object.assign(new Error('EIO: i/o error (injected)'), { code: 'EIO' });
    };
    const realRename = fsp.rename;
    fsp.rename = async (from, to) => {
      if (armed && fault.op === 'rename' && finals.has(basename(to)) && basename(from).startsWith('.depotkit-tmp-') && ++count === fault.nth) strike();
      return realRename(from, to);
    };
    const realRm = fsp.rm;
    fsp.rm = async (path, options) => {
      if (armed && fault.op === 'rm' && String(path).endsWith('.bak') && ++count === fault.nth) strike();
      return realRm(path, options);
    };
    syncBuiltinESMExports();
    const pki = await import(${JSON.stringify(join(DIST, 'cert', 'index.js'))});
    const target = ${JSON.stringify(target)};
    const m = ${JSON.stringify(material)};
    const [write, old, next] = ${JSON.stringify(kind)} === 'ca' ? [pki.writeCaDir, m.oldCa, m.newCa] : [pki.writeServerDir, m.oldServer, m.newServer];
    await write(target, old);
    writeFileSync(target + '/../new.json', JSON.stringify(next));
    armed = true;
    await write(target, next, { force: true });
    console.log('replaced');
  `);
}

async function read(path: string): Promise<string | undefined> {
  return (await exists(path)) ? readFile(path, 'utf8') : undefined;
}

/** Key and certificate belong together (checked with node:crypto, not depotkit). */
function isPair(keyPem: string | undefined, certPem: string | undefined): boolean {
  if (keyPem === undefined || certPem === undefined) return false;
  return new X509Certificate(certPem).checkPrivateKey(createPrivateKey(keyPem));
}

async function caState(ca: string) {
  const key = await read(join(ca, CA_KEY_FILE));
  const cert = await read(join(ca, CA_CERT_FILE));
  const keyBak = await read(join(ca, `${CA_KEY_FILE}.bak`));
  const certBak = await read(join(ca, `${CA_CERT_FILE}.bak`));
  return { key, cert, keyBak, certBak, inPlace: isPair(key, cert), backedUp: isPair(keyBak, certBak) };
}

const subjectOf = (pem: string | undefined) => (pem ? new X509Certificate(pem).subject : undefined);

describe('--force on a key pair never leaves only a mismatched pair', () => {
  it('cert ca --force killed between its two renames: the old pair is whole as .bak, and the CLI says how to restore it', async () => {
    const ca = join(dir, 'ca');
    const run = await replaceWithFault('ca', ca, { op: 'rename', nth: 2, action: 'crash' });
    expect(run.signal, run.stderr).toBe('SIGKILL');
    const state = await caState(ca);
    // The crash did happen between the two files: the new key sits beside the old certificate.
    expect(state.inPlace).toBe(false);
    expect(subjectOf(state.cert)).toBe('CN=Old CA');
    // ...and a whole pair is still there: the old one.
    expect(state.backedUp).toBe(true);
    expect(subjectOf(state.certBak)).toBe('CN=Old CA');

    const issueFrom = () => issueCert(join(dir, 'srv'), { caDir: ca, dns: ['depot.lab'] });
    const issue = await refusal(issueFrom());
    expectOneSentence(
      issue,
      2,
      /ca-key\.pem does not belong to .*ca-cert\.pem: they are not a pair\.\n {2}A replacement of this CA was interrupted; the previous pair is .*ca-key\.pem\.bak and .*ca-cert\.pem\.bak/,
    );
    // Another --force does not run over the only whole pair.
    const again = await refusal(writeCaDir(ca, material.newCa, { force: true }));
    expectOneSentence(again, 2, /ca-key\.pem\.bak and .*ca-cert\.pem\.bak are left from a replacement that was interrupted/);
    expect((await caState(ca)).backedUp).toBe(true);

    // The hint's remedy works.
    await rename(join(ca, `${CA_KEY_FILE}.bak`), join(ca, CA_KEY_FILE));
    await rename(join(ca, `${CA_CERT_FILE}.bak`), join(ca, CA_CERT_FILE));
    await issueFrom();
    await writeCaDir(ca, material.newCa, { force: true });
    expect((await readdir(ca)).sort()).toEqual([CA_CERT_FILE, CA_KEY_FILE]);
  });

  it('cert ca --force failing on its second rename puts the old pair back, byte for byte', async () => {
    const ca = join(dir, 'ca');
    const run = await replaceWithFault('ca', ca, { op: 'rename', nth: 2, action: 'fail' });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/ca-cert\.pem/);
    const state = await caState(ca);
    expect(state.inPlace).toBe(true);
    expect(subjectOf(state.cert)).toBe('CN=Old CA');
    const next = JSON.parse(await readFile(join(dir, 'new.json'), 'utf8')) as { keyPem: string };
    expect(isPair(next.keyPem, state.cert)).toBe(false);
    // Nothing left over: no .bak, no temporary file.
    expect((await readdir(ca)).sort()).toEqual([CA_CERT_FILE, CA_KEY_FILE]);
  });

  it('cert issue --force killed after its first rename: a whole key, certificate and chain set is there', async () => {
    const srv = join(dir, 'srv');
    const run = await replaceWithFault('server', srv, { op: 'rename', nth: 2, action: 'crash' });
    expect(run.signal, run.stderr).toBe('SIGKILL');
    const key = await read(join(srv, SERVER_KEY_FILE));
    const cert = await read(join(srv, SERVER_CERT_FILE));
    expect(isPair(key, cert)).toBe(false);
    const keyBak = await read(join(srv, `${SERVER_KEY_FILE}.bak`));
    const certBak = await read(join(srv, `${SERVER_CERT_FILE}.bak`));
    const chainBak = await read(join(srv, `${SERVER_CHAIN_FILE}.bak`));
    expect(isPair(keyBak, certBak)).toBe(true);
    expect(chainBak?.startsWith(certBak!)).toBe(true);
    expect(new X509Certificate(certBak!).subjectAltName).toBe('DNS:old.lab');
  });

  it('cert issue --force failing mid-way keeps the old set, byte for byte, and leaves nothing else', async () => {
    const srv = join(dir, 'srv');
    const run = await replaceWithFault('server', srv, { op: 'rename', nth: 3, action: 'fail' });
    expect(run.code).not.toBe(0);
    const key = await read(join(srv, SERVER_KEY_FILE));
    const cert = await read(join(srv, SERVER_CERT_FILE));
    const chain = await read(join(srv, SERVER_CHAIN_FILE));
    expect(isPair(key, cert)).toBe(true);
    expect(new X509Certificate(cert!).subjectAltName).toBe('DNS:old.lab');
    expect(chain!.startsWith(cert!)).toBe(true);
    expect((await readdir(srv)).sort()).toEqual([SERVER_CERT_FILE, SERVER_CHAIN_FILE, SERVER_KEY_FILE]);
  });

  it('a crash after both renames leaves stale .bak files; the next --force sees the pair in place is whole and goes on', async () => {
    const ca = join(dir, 'ca');
    const run = await replaceWithFault('ca', ca, { op: 'rm', nth: 1, action: 'crash' });
    expect(run.signal, run.stderr).toBe('SIGKILL');
    const state = await caState(ca);
    expect(state.inPlace).toBe(true);
    expect(subjectOf(state.cert)).toBe('CN=New CA');
    expect(state.backedUp).toBe(true);
    await writeCaDir(ca, await createCa({ cn: 'Third CA', keySize: 2048 }), { force: true });
    expect((await readdir(ca)).sort()).toEqual([CA_CERT_FILE, CA_KEY_FILE]);
    expect(subjectOf(await read(join(ca, CA_CERT_FILE)))).toBe('CN=Third CA');
  });
});
