import { describe, expect, it } from 'vitest';
import { formatPruneReport } from '../../src/cli/transfer.js';

describe('transfer reports speak of one file as one file', () => {
  it('prune: one candidate is "1 file", several are "files"', () => {
    const one = formatPruneReport({
      depot: '/srv/depot',
      removed: false,
      bytes: 2048,
      candidates: [{ path: 'PROD/COMP/VCENTER/old.iso', size: 2048, kind: 'stale' }],
    });
    expect(one[0]).toBe('Would remove 1 file, 2.0 KiB, from /srv/depot:');
    const two = formatPruneReport({
      depot: '/srv/depot',
      removed: true,
      bytes: 4096,
      candidates: [
        { path: 'PROD/COMP/VCENTER/old.iso', size: 2048, kind: 'stale' },
        { path: 'PROD/COMP/VCENTER/.depotkit-tmp-x', size: 2048, kind: 'temporary' },
      ],
    });
    expect(two[0]).toBe('Removed 2 files, 4.0 KiB, from /srv/depot:');
  });
});
