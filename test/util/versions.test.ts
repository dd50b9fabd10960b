import { describe, expect, it } from 'vitest';
import { releaseOfVersion } from '../../src/depot/versions.js';
import { compareVersions, versionAtLeast } from '../../src/util/versions.js';

describe('versions', () => {
  it('names a product version by its first four numbers', () => {
    expect(releaseOfVersion('9.0.0.0.24755229')).toBe('9.0.0.0');
    expect(releaseOfVersion('9.1')).toBe('9.1');
  });

  it('orders versions number by number, other parts by code point', () => {
    expect(['9.0.10.0', '9.0.9.0', '9.1.0.0', '10.0.0.0', '9.0.9.0-beta'].sort(compareVersions)).toEqual([
      '9.0.9.0',
      '9.0.9.0-beta',
      '9.0.10.0',
      '9.1.0.0',
      '10.0.0.0',
    ]);
    expect(compareVersions('9.0.0.0', '9.0.0.0')).toBe(0);
  });

  it('says whether an appliance version is at least a release, by the release parts alone, missing ones as 0', () => {
    expect(versionAtLeast('9.1.0.0.25368698', '9.1')).toBe(true);
    expect(versionAtLeast('9.1.0.0.25368698', '9.1.1')).toBe(false);
    expect(versionAtLeast('9.1.1.0.1', '9.1.1')).toBe(true);
    expect(versionAtLeast('9.10.0.0', '9.9.1')).toBe(true);
    expect(versionAtLeast('9.1', '9.1.0')).toBe(true);
    expect(versionAtLeast('9.0.3.0.1', '9.1')).toBe(false);
    expect(versionAtLeast('10.0', '9.1.1')).toBe(true);
    expect(versionAtLeast('unknown', '9.1')).toBe(false);
  });
});
