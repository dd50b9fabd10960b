import { describe, expect, it } from 'vitest';
import { formatMirrorReport, formatPruneReport } from '../../src/cli/transfer.js';
import type { MirrorReport } from '../../src/transfer/mirror.js';

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

  it('mirror: says where the vCenter upgrade metadata was found, that there is none, or that the server shows none', () => {
    const report = (upgradeMetadata: MirrorReport['upgradeMetadata']) =>
      formatMirrorReport({
        ok: true,
        url: 'https://depot.lab.local/',
        out: '/srv/depot',
        vouchedBy: 'source',
        seal: 'catalog 00000-00000-00000-00000-00000',
        lock: {},
        metadata: { written: [], unchanged: [], missing: [], held: false },
        upgradeMetadata,
        downloaded: [{ path: 'PROD/COMP/VCENTER/a.iso', size: 1, resumedFrom: 0 }],
        alreadyInPlace: [],
        failed: [],
        replacedPartials: [],
        bytesDownloaded: 1,
        bytesHashedLocally: 0,
        stale: 0,
        releases: [],
        verify: { ok: true, findings: [] } as unknown as MirrorReport['verify'],
      }).join('\n');
    expect(report({ source: 'status', files: 3 })).toContain("vCenter upgrade metadata: 3 files, found in the server's status.");
    expect(report({ source: 'listing', files: 1 })).toContain("vCenter upgrade metadata: 1 file, found in the server's listing of the folder.");
    expect(report({ source: 'status', files: 0 })).toContain("vCenter upgrade metadata: none (the server's status names none).");
    expect(report({ source: 'none', files: 0 })).toContain('the server lists none, so whatever its depot has of it is not in this mirror');
    expect(report({ source: 'status', files: 0 })).toContain('1 binary downloaded');
  });
});
