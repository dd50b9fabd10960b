import { cp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMirrorReport } from '../../src/cli/transfer-mirror.js';
import { formatUnpackReport } from '../../src/cli/transfer-unpack.js';
import { componentDir } from '../../src/constants.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { selectionFileFor } from '../../src/depot/selection.js';
import { verifyDepot } from '../../src/depot/verify.js';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { checkDepot } from '../../src/check/check.js';
import { renderStatusPage, startDepotServer, statusData } from '../../src/server/index.js';
import { mirrorDepot } from '../../src/transfer/mirror.js';
import { packDepot } from '../../src/transfer/pack.js';
import { unpackDepot } from '../../src/transfer/unpack.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { fetchRaw } from '../server/helpers.js';
import { parsePrometheus, sampleValue } from '../server/status-helpers.js';
import { readCatalog } from './helpers.js';

// A depot cut by a selection says one thing everywhere: mirror, pack and unpack, verify, check, the status page and
// /metrics judge it on what was chosen. On a demo of three releases (9.0.0.0, its patch 9.0.1.0, and 9.1.0.0).
const RELEASES = ['9.0.0.0', '9.0.1.0', '9.1.0.0'];

let base: string;
let cleanup: () => Promise<void>;
let source: string;
let caPem: string;
let tls: { certPem: string; keyPem: string };
let url: string;
let stop: () => Promise<void>;
let n = 0;
const fresh = (name: string) => join(base, `${name}-${n++}`);

/** Every binary of the source's catalog under one component, by path. */
async function binariesOf(component: string): Promise<string[]> {
  const catalog = await readCatalog(source);
  return catalog.patches[component]!.flatMap((v) => v.artifacts.bundles.flatMap((b) => b.binaries.map((x) => `${componentDir(component)}/${x.fileName}`)));
}

beforeAll(async () => {
  ({ dir: base, cleanup } = await tempDir('depotkit-cut-'));
  source = join(base, 'source');
  await makeDemoDepot(source, { releases: RELEASES, binarySize: 2048, signingDir: join(base, 'signing') });
  const ca = await createCa({ keySize: 2048 });
  const issued = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
  caPem = ca.certPem;
  tls = { certPem: issued.chainPem, keyPem: issued.keyPem };
  const server = await startDepotServer({ root: source, host: '127.0.0.1', port: 0, tls });
  url = server.url.replace('127.0.0.1', 'localhost');
  stop = () => server.close();
});
afterAll(async () => {
  await stop?.();
  await cleanup();
});

describe('a depot mirrored with --component', () => {
  let out: string;
  let vcenter: string[];

  beforeAll(async () => {
    out = fresh('mirror');
    vcenter = await binariesOf('VCENTER');
  });

  it('is complete as chosen in the mirror report, in verify and in the record it leaves; what was left out is named per release and component', async () => {
    const report = await mirrorDepot({ url, out, caPems: [caPem], select: { components: ['VCENTER'] } });
    expect(report.ok).toBe(true);
    expect(report.downloaded.map((d) => d.path).sort()).toEqual([...vcenter].sort());
    expect(JSON.parse(await readFile(selectionFileFor(out), 'utf8'))).toEqual({ choices: [{ releases: [], components: ['VCENTER'] }] });

    const verify = await verifyDepot(out);
    expect(verify.ok).toBe(true);
    expect(verify.selection).toBe('component VCENTER');
    expect(verify.findings.filter((f) => f.severity === 'error')).toEqual([]);
    expect(verify.releases.map((r) => [r.version, r.state])).toEqual(RELEASES.map((v) => [v, 'complete-as-chosen']));
    const ga = verify.releases[0]!;
    expect(ga.counts).toMatchObject({ present: 1, missing: 0, leftOut: ga.counts.binaries - 1 });
    expect(ga.leftOut.map((f) => f.component)).toContain('ESX_HOST');
    expect(ga.message).toMatch(
      /^Release 9\.0\.0\.0 is complete as chosen: the binary chosen is here with its bytes; \d+ left out by the selection of component VCENTER: ESX_HOST, /,
    );
    // Left out is info; a missing required component folder too, since none of its binaries was chosen.
    expect(verify.findings.find((f) => f.id === 'layout.component.missing')).toMatchObject({ severity: 'info' });
    expect(verify.findings.find((f) => f.id === 'binary.missing')!.message).toMatch(/Left out by the selection this depot records \(component VCENTER\)\.$/);

    // One wording: the mirror prints the verdict verify gives, and no longer says "missing" for what it left out.
    const lines = formatMirrorReport(report);
    for (const r of verify.releases) expect(lines).toContain(r.message);
    expect(lines.join('\n')).not.toMatch(/binaries present; \d+ missing/);
    expect(lines.find((l) => l.startsWith('OK: '))).toMatch(/holds every binary this mirror chose; depot verify's checks: 0 errors/);
  });

  it('depot verify exits 0 through the CLI, and a chosen binary that goes missing is an error again', async () => {
    const ok = await runCli(['depot', 'verify', out]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('Judged on the selection (component VCENTER)');
    expect(ok.stdout).not.toMatch(/ERROR/);

    const broken = fresh('broken');
    await mirrorDepot({ url, out: broken, caPems: [caPem], select: { components: ['VCENTER'] } });
    await rm(join(broken, vcenter[0]!));
    const result = await verifyDepot(broken);
    expect(result.ok).toBe(false);
    expect(result.findings.filter((f) => f.severity === 'error').map((f) => [f.id, f.path])).toEqual([['binary.missing', vcenter[0]]]);
    expect(result.releases.find((r) => r.files.length)).toMatchObject({ state: 'binaries-missing', counts: { missing: 1 } });
  });

  it('the status page says complete as chosen, shows the files left out as such, and suggests the check that reads the selection', async () => {
    const data = await statusData(out, { url: 'https://localhost:8443', certPem: tls.certPem });
    expect(data.selection).toBe('component VCENTER');
    expect(data.summary).toMatchObject({ complete: true, missing: 0, present: vcenter.length });
    expect(data.access.commands.check).toBe('depotkit check https://localhost:8443 --ca depot-ca.pem --component VCENTER');
    const html = renderStatusPage(data);
    expect(html).toContain('✓ Complete as chosen:');
    expect(html).not.toContain('Incomplete');
    expect(html).not.toContain('✗ missing');
    expect(html).toContain('left out by the selection');
    for (const r of data.releases) expect(html).toContain(r.message);
  });

  it('check with the same selection accepts it and says the same verdicts; without it, it reads the selection the depot records', async () => {
    const server = await startDepotServer({ root: out, host: '127.0.0.1', port: 0, tls });
    try {
      const served = server.url.replace('127.0.0.1', 'localhost');
      const chosen = await checkDepot(served, { caPems: [caPem], selection: { components: ['VCENTER'] } });
      expect(chosen.accepted).toBe(true);
      expect(chosen.releases.map((r) => r.message)).toEqual((await verifyDepot(out)).releases.map((r) => r.message));
      // Served by depotkit serve, the depot says what it was cut to (its status JSON): check judges it on that.
      const recorded = await checkDepot(served, { caPems: [caPem] });
      expect(recorded).toMatchObject({ accepted: true, selection: 'component VCENTER', selectionRecorded: true });
      expect(recorded.releases.map((r) => r.message)).toEqual(chosen.releases.map((r) => r.message));
      expect(recorded.findings.filter((f) => f.severity === 'error')).toEqual([]);
      expect(recorded.findings.map((f) => `${f.severity} ${f.id} ${f.path ?? ''}`)).toEqual(
        chosen.findings.map((f) => `${f.severity} ${f.id} ${f.path ?? ''}`),
      );
      // The same tree without its record: every binary the catalog names is judged, the left-out ones missing.
      const copy = `${out}-unrecorded`;
      await cp(out, copy, { recursive: true });
      await rm(selectionFileFor(copy));
      const plain = await startDepotServer({ root: copy, host: '127.0.0.1', port: 0, tls });
      try {
        const whole = await checkDepot(plain.url.replace('127.0.0.1', 'localhost'), { caPems: [caPem] });
        expect(whole.accepted).toBe(false);
        expect(whole.selectionRecorded).toBeUndefined();
        expect(whole.findings.some((f) => f.id === 'binary.missing' && f.severity === 'error')).toBe(true);
      } finally {
        await plain.close();
      }

      // /metrics: per release, the binaries left out are left_out, not missing, and the state is complete-as-chosen.
      await server.refreshStatus();
      const metrics = parsePrometheus((await fetchRaw(server.url, '/metrics', { ca: caPem })).body.toString('utf8')).samples;
      for (const r of (await verifyDepot(out)).releases) {
        expect(sampleValue(metrics, 'depotkit_release_binaries', { release: r.version, state: 'missing' })).toBe(0);
        expect(sampleValue(metrics, 'depotkit_release_binaries', { release: r.version, state: 'left_out' })).toBe(r.counts.leftOut);
        expect(sampleValue(metrics, 'depotkit_release_binaries', { release: r.version, state: 'present' })).toBe(1);
        expect(sampleValue(metrics, 'depotkit_release_state', { release: r.version, state: 'complete-as-chosen' })).toBe(1);
        expect(sampleValue(metrics, 'depotkit_release_state', { release: r.version, state: 'binaries-missing' })).toBe(0);
      }
    } finally {
      await server.close();
    }
  });

  it('a later mirror of the whole catalog takes the record away: nothing is left out any more', async () => {
    const report = await mirrorDepot({ url, out, caPems: [caPem] });
    expect(report.ok).toBe(true);
    await expect(readFile(selectionFileFor(out))).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await verifyDepot(out)).releases.map((r) => r.state)).toEqual(RELEASES.map(() => 'complete'));
  });
});

describe('a depot unpacked from a selective pack', () => {
  it('records the choice (a second pack adds to it) and is judged on it by verify and the status page', async () => {
    const out = fresh('unpacked');
    const first = await unpackDepot({
      media: [(await packDepot({ depot: source, out: fresh('pack'), volumeSize: 1024 ** 3, select: { releases: ['9.0.1.0'] } })).out],
      out,
    });
    expect(first.ok).toBe(true);
    expect(first.releases.map((r) => [r.version, r.state])).toEqual([
      ['9.0.0.0', 'metadata-only'],
      ['9.0.1.0', 'complete'],
      ['9.1.0.0', 'metadata-only'],
    ]);
    expect(formatUnpackReport(first)).toContain(first.releases[2]!.message);
    expect(first.releases[2]!.message).toMatch(
      /is metadata only: none of the 33 binaries only it lists was chosen \(33 left out by the selection of release 9\.0\.1\.0: DEPOT_SERVICE, ESX_HOST, /,
    );

    const second = await unpackDepot({
      media: [(await packDepot({ depot: source, out: fresh('pack'), volumeSize: 1024 ** 3, select: { components: ['ESX_HOST'] } })).out],
      out,
    });
    expect(second.ok).toBe(true);
    expect(JSON.parse(await readFile(selectionFileFor(out), 'utf8'))).toEqual({
      choices: [
        { releases: ['9.0.1.0'], components: [] },
        { releases: [], components: ['ESX_HOST'] },
      ],
    });
    const verify = await verifyDepot(out);
    expect(verify.ok).toBe(true);
    expect(verify.selection).toBe('release 9.0.1.0 and component ESX_HOST');
    expect(verify.releases.map((r) => [r.version, r.state])).toEqual([
      ['9.0.0.0', 'metadata-only'],
      ['9.0.1.0', 'complete'],
      ['9.1.0.0', 'complete-as-chosen'],
    ]);
    const data = await statusData(out, { url: 'https://localhost:8443' });
    expect(data.releases.map((r) => r.state)).toEqual(verify.releases.map((r) => r.state));
    expect(renderStatusPage(data)).not.toContain('Incomplete');
    // Two choices of different kinds have no one set of flags: the check line names none rather than a wrong one.
    expect(data.access.commands.check).not.toMatch(/--release|--component/);
  });
});
