import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { normalizePem, parsePemBlocks, readPemFile, splitPemBlocks } from '../../src/cert/pem.js';
import { DepotkitError } from '../../src/util/errors.js';
import { tempDir } from '../helpers/temp.js';

const BODY = Buffer.from('depotkit test payload, long enough to wrap across more than one line of base64 output').toString('base64');
const block = (label: string, body = BODY) => `-----BEGIN ${label}-----\n${body.match(/.{1,64}/g)!.join('\n')}\n-----END ${label}-----\n`;

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(() => cleanup());

describe('PEM handling', () => {
  it('normalizes CRLF, indentation, odd line lengths and text between blocks to canonical LF PEM', () => {
    const messy = `Bag Attributes\r\n  friendlyName: x\r\n   -----BEGIN CERTIFICATE-----  \r\n${BODY.slice(0, 10)}\r\n  ${BODY.slice(10)}\r\n-----END CERTIFICATE-----\r\n\r\ntrailing words\r\n${block('CERTIFICATE').replace(/\n/g, '\r\n')}`;
    const out = normalizePem(messy);
    expect(out).toBe(block('CERTIFICATE') + block('CERTIFICATE'));
    expect(out).not.toContain('\r');
    expect(out.endsWith('-----\n')).toBe(true);
    // Idempotent.
    expect(normalizePem(out)).toBe(out);
  });

  it('adds the final newline and splits a chain, filtering by label', () => {
    const text = `${block('CERTIFICATE')}${block('PRIVATE KEY')}${block('CERTIFICATE')}`.trimEnd();
    expect(splitPemBlocks(text)).toHaveLength(3);
    expect(splitPemBlocks(text, 'CERTIFICATE')).toEqual([block('CERTIFICATE'), block('CERTIFICATE')]);
    expect(splitPemBlocks(text, 'PRIVATE KEY')).toEqual([block('PRIVATE KEY')]);
    expect(splitPemBlocks('no pem here')).toEqual([]);
  });

  it('keeps the headers of a legacy encrypted key', () => {
    const legacy = `-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00112233445566778899AABBCCDDEEFF\n\n${BODY}\n-----END RSA PRIVATE KEY-----\n`;
    const [b] = parsePemBlocks(legacy);
    expect(b!.headers).toEqual(['Proc-Type: 4,ENCRYPTED', 'DEK-Info: AES-128-CBC,00112233445566778899AABBCCDDEEFF']);
    expect(b!.pem).toContain('Proc-Type: 4,ENCRYPTED\nDEK-Info');
  });

  it.each([
    ['a block without END', `-----BEGIN CERTIFICATE-----\n${BODY}\n`, /no END line/],
    ['mismatched labels', `-----BEGIN CERTIFICATE-----\n${BODY}\n-----END PRIVATE KEY-----\n`, /ends with END PRIVATE KEY/],
    ['a line that is not base64', `-----BEGIN CERTIFICATE-----\n${BODY}\nnot base64!\n-----END CERTIFICATE-----\n`, /not base64/],
    ['damaged base64', `-----BEGIN CERTIFICATE-----\nQUJD=RA==\n-----END CERTIFICATE-----\n`, /base64 is damaged/],
    ['an empty block', `-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n`, /base64 is damaged/],
  ])('refuses %s with one sentence', (_name, text, message) => {
    let err: unknown;
    try {
      normalizePem(text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DepotkitError);
    expect((err as DepotkitError).exitCode).toBe(2);
    expect((err as Error).message).toMatch(message);
  });

  it('refuses text without any PEM block', () => {
    expect(() => normalizePem('hello')).toThrow(/no PEM block/);
  });

  it('reads the blocks of one label from a file, naming the file in errors', async () => {
    const path = join(dir, 'chain.pem');
    await writeFile(path, `${block('CERTIFICATE')}\r\n${block('CERTIFICATE')}`);
    expect(await readPemFile(path, 'CERTIFICATE')).toHaveLength(2);
    await expect(readPemFile(path, ['PRIVATE KEY', 'RSA PRIVATE KEY'])).rejects.toThrow(`${path} holds no PRIVATE KEY or RSA PRIVATE KEY PEM block.`);
    await expect(readPemFile(join(dir, 'missing.pem'), 'CERTIFICATE')).rejects.toThrow(/missing\.pem does not exist/);
  });
});
