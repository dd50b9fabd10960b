import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkSeal, formatSeal, parseSeal, sealCode } from '../../src/transfer/seal.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

describe('seal', () => {
  it('codes a SHA-256 as 25 characters of Crockford base32 in groups of five, from its first bits', () => {
    expect(sealCode('f'.repeat(64))).toBe('ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ');
    expect(sealCode('0'.repeat(64))).toBe('00000-00000-00000-00000-00000');
    // 0x08 = 00001000: the first 5 bits are 00001, the next 5 are 00000.
    expect(sealCode(`08${'0'.repeat(62)}`)).toBe('10000-00000-00000-00000-00000');
    expect(sealCode(sha('a'))).not.toBe(sealCode(sha('b')));
  });

  it('reads back what a person copies: case, dashes, spaces, I/L/O, whole hex digests', () => {
    const catalog = sha('catalog');
    const manifest = sha('manifest');
    const printed = formatSeal({ catalogSha256: catalog, manifestSha256: manifest });
    expect(printed).toMatch(/^catalog [0-9A-Z-]{29} manifest [0-9A-Z-]{29}$/);
    const seal = parseSeal(printed.toLowerCase().replaceAll('-', ' ').replaceAll('1', 'l').replaceAll('0', 'o'));
    expect(checkSeal(seal, { catalogSha256: catalog, manifestSha256: manifest })).toEqual({ ok: true });
    expect(checkSeal(parseSeal(`catalog ${catalog} manifest ${manifest}`), { catalogSha256: catalog, manifestSha256: manifest }).ok).toBe(true);
    expect(checkSeal(parseSeal(sealCode(catalog)), { catalogSha256: catalog }).ok).toBe(true);
  });

  it('says which part does not match', () => {
    const seal = parseSeal(formatSeal({ catalogSha256: sha('c'), manifestSha256: sha('m') }));
    expect(checkSeal(seal, { catalogSha256: sha('other'), manifestSha256: sha('m') })).toEqual({ ok: false, mismatch: 'catalog' });
    expect(checkSeal(seal, { catalogSha256: sha('c'), manifestSha256: sha('other') })).toEqual({ ok: false, mismatch: 'manifest' });
    expect(checkSeal(seal, { catalogSha256: sha('c') })).toEqual({ ok: false, mismatch: 'manifest' });
  });

  it('refuses what is not a seal with one sentence', () => {
    expect(() => parseSeal('hello')).toThrow(/not a seal code/);
    expect(() => parseSeal('UUUUU-UUUUU-UUUUU-UUUUU-UUUUU')).toThrow(/not a seal code/);
    expect(() => parseSeal('manifest 00000-00000-00000-00000-00000')).toThrow(/no catalog/);
  });
});
