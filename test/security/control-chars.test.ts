import { generateKeyPairSync } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import forge from 'node-forge';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { parseCatalog } from '../../src/depot/catalog.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { verifyDepot } from '../../src/depot/verify.js';
import { formatVerifyResult } from '../../src/cli/depot.js';
import { printJson, printLines } from '../../src/cli/output.js';
import { escapeControlChars, hasControlChars } from '../../src/util/text.js';
import { runCli } from '../helpers/cli.js';
import { printed } from '../helpers/output.js';
import { tempDir } from '../helpers/temp.js';
import { freePort } from '../helpers/ports.js';
import { vendorLikeSource } from '../depot/helpers.js';
import { depotBuild, expectNoControlChars, expectOneSentence, listTree, makeZip, renameFirstBinary } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(() => cleanup());

/** A file name that sets the terminal's title, rings its bell and forges a report line. */
const HOSTILE_NAME = 'VMware-VCSA\x1b]0;owned\x07\r\nOK: forged line\x1b[2J.iso';
const HOSTILE_ESCAPED = 'VMware-VCSA\\x1b]0;owned\\x07\\r\\nOK: forged line\\x1b[2J.iso';

/** Gives the first binary of the catalog at `root` the hostile file name. */
const poisonCatalog = (root: string) => renameFirstBinary(root, HOSTILE_NAME);

describe('control characters in names reach no terminal raw', () => {
  it('escapes C0, DEL and C1 as a JavaScript string would, and leaves other text alone', () => {
    expect(escapeControlChars('a\x1b[31mb\x07\r\n\t\x00\x7f\x9b\u0085c')).toBe('a\\x1b[31mb\\x07\\r\\n\\t\\x00\\x7f\\x9b\\x85c');
    expect(escapeControlChars('Zürich 漢字 ✓ back\\slash')).toBe('Zürich 漢字 ✓ back\\slash');
    // A right-to-left override makes "evil\u202egnp.iso" show as "evilosi.png": shown escaped, and refused in names.
    expect(escapeControlChars('evil\u202egnp.iso \u2066x\u2069 \u200f')).toBe('evil\\u202egnp.iso \\u2066x\\u2069 \\u200f');
    expect(hasControlChars('VMware-\u202eosi.ova')).toBe(true);
    expect(escapeControlChars('عربي עברית')).toBe('عربي עברית');
    expect(hasControlChars('plain-9.0.0.0.iso')).toBe(false);
    expect(hasControlChars('a\u0090b')).toBe(true);
  });

  it('depot verify reports a catalog file name with control characters as one finding, escaped, and forges no line', async () => {
    const root = join(dir, 'depot');
    await makeDemoDepot(root, { binarySize: 512 });
    await poisonCatalog(root);

    // depot verify's lines and its --json, printed as the command prints them.
    const result = await verifyDepot(root);
    expect(result.ok).toBe(false);
    const r = printed(() => printLines(formatVerifyResult(result)));
    expectNoControlChars(r.stdout);
    expect(r.stdout).toContain(`"${HOSTILE_ESCAPED}"`);
    expect(r.stdout).toMatch(
      /^ERROR catalog\.file-name\.invalid: .*names the \w+ binary ".*" \(bundle .*\) whose file name holds control characters: refused\.$/m,
    );
    // The forged text stays inside its own line.
    expect(r.stdout).not.toMatch(/^OK: forged line/m);

    const json = printed(() => printJson(result));
    const parsed = JSON.parse(json.stdout) as { ok: boolean; findings: { id: string; message: string }[] };
    expect(parsed.ok).toBe(false);
    expect(parsed.findings.map((f) => f.id)).toContain('catalog.file-name.invalid');
    // JSON escapes by itself: the message carries the escaped spelling, never the raw bytes.
    expect(json.stdout).not.toContain('\x1b');
  });

  it('depot build refuses such a catalog with one sentence, before writing anything', async () => {
    const src = await vendorLikeSource(dir, 512);
    await poisonCatalog(src.metadataDir);
    const out = join(dir, 'out');
    const r = await depotBuild({ metadata: src.metadataDir, binaries: [src.binariesDir], out });
    expectOneSentence(r, 2, /whose file name holds control characters: refused\./);
    expect(r.stderr).toContain(HOSTILE_ESCAPED);
    expect(await listTree(out)).toEqual([]);
  });

  it('the library refuses the name whichever control character it holds (NUL, DEL, C1)', () => {
    for (const name of ['a\x00b.iso', 'a\x7fb.iso', 'a\u009bb.iso', 'tab\there.iso']) {
      const text = JSON.stringify({
        patches: {
          VCENTER: [
            {
              productVersion: '9.0.0.0.1',
              artifacts: { bundles: [{ name: 'b', type: 'INSTALL', binaries: [{ fileName: name, size: 1, checksum: 'a'.repeat(64) }] }] },
            },
          ],
        },
      });
      expect(() => parseCatalog(text)).toThrow(/whose file name holds control characters/);
    }
  });

  it('an archive entry name with an escape sequence is refused, escaped in the one sentence', async () => {
    const src = await vendorLikeSource(dir, 512);
    const zip = join(dir, 'meta.zip');
    const catalog = await readFile(join(src.metadataDir, DEPOT_PATHS.catalog));
    await writeFile(
      zip,
      await makeZip([
        { name: DEPOT_PATHS.catalog, data: catalog },
        { name: 'PROD/metadata/\x1b]0;owned\x07notes.txt', data: 'x' },
      ]),
    );
    const out = join(dir, 'out');
    const r = await depotBuild({ metadata: zip, binaries: [src.binariesDir], out });
    expectOneSentence(r, 2, /holds an entry whose name has control characters \("PROD\/metadata\/\\x1b\]0;owned\\x07notes\.txt"\)/);
    expect(await listTree(out)).toEqual([]);
  });

  it('every human line is escaped: a certificate whose names carry C1 and C0 controls is shown inert', async () => {
    // A certificate made elsewhere, with a CSI (U+009B) in its CN and CR/LF/ESC in a SAN name.
    const { privateKey, publicKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    const cert = forge.pki.createCertificate();
    cert.serialNumber = '4a';
    cert.publicKey = forge.pki.publicKeyFromPem(publicKey);
    cert.validity.notBefore = new Date(Date.now() - 86_400_000);
    cert.validity.notAfter = new Date(Date.now() + 86_400_000);
    const name = [{ shortName: 'CN', value: 'depot\u009b2J', valueTagClass: forge.asn1.Type.UTF8 as unknown as forge.asn1.Class }];
    cert.setSubject(name);
    cert.setIssuer(name);
    cert.setExtensions([{ name: 'subjectAltName', altNames: [{ type: 2, value: 'a.lab\r\nSHA-256:      FORGED\x1b[2J' }] }]);
    cert.sign(forge.pki.privateKeyFromPem(privateKey), forge.md.sha256.create());
    const file = join(dir, 'odd.pem');
    await writeFile(file, forge.pki.certificateToPem(cert));

    const r = await runCli(['cert', 'inspect', file]);
    expect(r.code, r.stderr).toBe(0);
    expectNoControlChars(r.stdout);
    expect(r.stdout).toContain('DNS:a.lab\\r\\nSHA-256:      FORGED\\x1b[2J');
    expect(r.stdout).toContain('depot\\x9b2J');
    expect(r.stdout.match(/^SHA-256:/gm)).toHaveLength(1);
  });

  it('--json escapes C1 and bidirectional controls too: a consumer named with U+009B and U+202E reaches no terminal raw', async () => {
    const name = 'evil\u009b2J\u202egnp.iso\u2066';
    const inventory = join(dir, 'fleet.yaml');
    // A port nothing listens on: the row fails at once, under its name.
    await writeFile(inventory, `installers:\n  - { name: "${name}", url: "https://127.0.0.1:${await freePort()}", passwordEnv: FLEET_PASSWORD }\n`);
    const r = await runCli(['installer', 'status', '--inventory', inventory, '--json'], { env: { FLEET_PASSWORD: 'not-sent-anywhere' } });
    expect(r.code, r.stderr).toBe(1);
    expectNoControlChars(r.stdout);
    expect(r.stdout).not.toMatch(/[\u202e\u2066]/);
    expect(r.stdout).toContain('"name": "evil\\u009b2J\\u202egnp.iso\\u2066"');
    // Still the same JSON: the name reads back whole.
    expect((JSON.parse(r.stdout) as { installers: Array<{ name: string }> }).installers[0]!.name).toBe(name);
  });
});
