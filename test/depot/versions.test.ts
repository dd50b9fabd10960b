import { describe, expect, it } from 'vitest';
import { compareVersions, releaseOfVersion } from '../../src/depot/versions.js';

describe('release versions', () => {
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
});
