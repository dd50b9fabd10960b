import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { beforeAll, describe, expect, it } from 'vitest';
import { statusData, type StatusRelease } from '../../src/server/status-data.js';
import { renderStatusPage } from '../../src/server/status-page.js';
import { startDepotServer } from '../../src/server/index.js';
import { readCatalogBinaries } from '../depot/helpers.js';
import { RELEASE_STATES, type ReleasesDepot, releaseStates, releasesDepot } from '../depot/releases.js';
import { useTempDir } from '../helpers/temp.js';
import { fetchRaw } from './helpers.js';
import { demoDepot, STATUS_JSON_SCHEMA, writePki } from './status-helpers.js';

const tmp = useTempDir('depotkit-status-releases-');
let root: string;
let fixture: ReleasesDepot;

beforeAll(async () => {
  root = join(tmp.dir, 'releases');
  fixture = await releasesDepot(root);
});

describe('the status page, release by release', () => {
  it('gives each release its state, counts and files with problems, as verify and check do', async () => {
    const data = await statusData(root, { url: 'http://depot.lab.local' });
    expect(releaseStates(data.releases)).toEqual(RELEASE_STATES);
    const [complete, metadataOnly, missing, other] = data.releases as StatusRelease[];
    expect(complete!.counts).toEqual({ binaries: 16, present: 16, missing: 0, wrongBytes: 0, unreadable: 0, leftOut: 0 });
    expect(metadataOnly!.counts).toMatchObject({ present: 14, missing: 2 });
    expect(missing!.problems.map((p) => [p.path, p.problem])).toEqual([[fixture.missing.path, 'missing']]);
    expect(other!.problems).toEqual([
      expect.objectContaining({
        path: fixture.otherBuild.path,
        problem: 'other-build',
        otherBuild: expect.objectContaining({ path: fixture.otherBuild.holds, by: 'size' }),
      }),
    ]);

    const html = renderStatusPage(data);
    const section = (version: string) =>
      html.slice(html.indexOf(`>Release ${version}</h3>`), html.indexOf('</section>', html.indexOf(`>Release ${version}</h3>`)));
    expect(section('9.0.0.0')).toContain('✓ complete');
    expect(section('9.0.1.0')).toContain('metadata only: its own binaries are not in this depot');
    expect(section('9.0.2.0')).toContain('✗ 1 file missing or wrong');
    expect(section('9.0.3.0')).toContain('✗ 1 file with other bytes than it lists');
    expect(section('9.0.3.0')).toContain(`${fixture.otherBuild.path} is `);
    expect(section('9.0.3.0')).toContain(`the size of vcenter-${fixture.otherBuild.holdsVersion}.bin`);
  });

  it('shows a release with no binary as a fault when no other release holds any', async () => {
    const empty = join(tmp.dir, 'empty');
    await demoDepot(empty, 1024);
    for (const b of await readCatalogBinaries(empty)) await rm(join(empty, b.path));
    const data = await statusData(empty, { url: 'http://depot.lab.local' });
    expect(releaseStates(data.releases)).toEqual([['9.0.0.0', 'metadata-only']]);
    expect(renderStatusPage(data)).toContain('<span class="bad">✗ metadata only: its own binaries are not in this depot</span>');
    expect(renderStatusPage(await statusData(root, { url: 'http://depot.lab.local' }))).toContain(
      '<span class="muted">metadata only: its own binaries are not in this depot</span>',
    );
  });

  it('serves the same states in its JSON variant, in the documented shape', async () => {
    const pki = await writePki(join(tmp.dir, 'pki'));
    const server = await startDepotServer({ root, host: '127.0.0.1', port: 0, tls: { certPem: pki.chainPem, keyPem: pki.keyPem } });
    try {
      const json = await fetchRaw(server.url, '/', { ca: pki.caCertPem, headers: { Accept: 'application/json' } });
      expect(json.status).toBe(200);
      const report = JSON.parse(json.body.toString()) as { releases: StatusRelease[] };
      const validate = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(STATUS_JSON_SCHEMA);
      expect(validate(report), JSON.stringify(validate.errors)).toBe(true);
      expect(releaseStates(report.releases)).toEqual(RELEASE_STATES);
      expect(report.releases[2]!.message).toBe('Release 9.0.2.0 has 1 of its 16 binaries missing: the installer fails their download.');
    } finally {
      await server.close();
    }
  });
});
