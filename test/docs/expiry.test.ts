/**
 * The expiry runbook's rehearsal runs as written: its shell block, unchanged
 * but for its folder and port (a free one), with `depotkit` the built CLI. The
 * depot is known as depot.lab.local, which this host does not resolve. Each of
 * the three places shows both dates: check's warnings, the status page's JSON
 * and /metrics, whose gauge gives the days left the alert rules compute.
 */
import { lookup } from 'node:dns/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { expectNothingLeftRunning, rehearseRunbook, runbookRehearsal } from '../helpers/runbook.js';

const RUNBOOK = 'docs/runbooks/expiry.md';

const rehearsal = runbookRehearsal('expiry');

it('the expiry rehearsal runs as written: check, the status page and /metrics each show the certificate and CA dates; nothing left running', async () => {
  await expect(lookup('depot.lab.local')).rejects.toThrow();
  const run = await rehearseRunbook(rehearsal, RUNBOOK, join(rehearsal.dir(), 'expiry'), ['depot_port'], 180);
  const { stdout, stderr } = run;
  // check, by address for depot.lab.local: both dates warned of, the depot still accepted.
  expect(stdout).toMatch(/^WARN {2}cert\.expiring-soon: /m);
  expect(stdout).toMatch(/^WARN {2}tls\.ca\.expiring-soon: /m);
  expect(stdout).toMatch(/^ACCEPT: the installer would accept this depot/m);
  // The status page's JSON (a day may have begun between issuing and asking).
  const days = (name: string) => Number(new RegExp(`^"${name}DaysLeft": *(\\d+)$`, 'm').exec(stdout)?.[1]);
  expect(days('certificate')).toBeGreaterThanOrEqual(19);
  expect(days('certificate')).toBeLessThanOrEqual(20);
  expect(days('ca')).toBeGreaterThanOrEqual(24);
  expect(days('ca')).toBeLessThanOrEqual(25);
  // /metrics: one series for the server and one for its CA, and the days left computed from each.
  expect(stdout).toMatch(/^depotkit_cert_not_after\{role="server",subject="CN=depot\.lab\.local",serial="[0-9A-Fa-f]+"\} \d+$/m);
  expect(stdout).toMatch(/^depotkit_cert_not_after\{role="ca",subject="CN=depotkit private CA",serial="[0-9A-Fa-f]+"\} \d+$/m);
  expect(stdout).toMatch(/^depotkit_cert_not_after\{role="server",.*\}: (19|20) days left$/m);
  expect(stdout).toMatch(/^depotkit_cert_not_after\{role="ca",.*\}: (24|25) days left$/m);
  expect(stdout + stderr).not.toContain('Dep0t-Secret');

  await expectNothingLeftRunning(run);
}, 240_000);
