import { hasErrors } from '../util/findings.js';
import { connectMgmt } from './client.js';
import { planReplacement } from './replace-plan.js';
import { customRequest, installAndVerify, signedCsrRequest, summaryOfTls } from './replace-steps.js';
import type { ReplaceCertOptions, ReplaceCertReport } from './replace-types.js';

export { csrSpec } from './replace-steps.js';
export type { CertSummary, CsrSubject, ReplaceCertOptions, ReplaceCertReport } from './replace-types.js';

/**
 * The whole replacement: the options checked (replace-plan), a session, the
 * server's CSR signed by the toolkit's CA or a certificate made elsewhere,
 * replace, waiting through the restart, and a TLS check of what the server
 * then serves (replace-steps).
 */
export async function replaceCertificate(opts: ReplaceCertOptions): Promise<ReplaceCertReport> {
  const plan = planReplacement(opts);
  (opts.onStep ?? (() => {}))(`Opening a session on ${plan.origin.host}...`);
  const client = await connectMgmt(opts);
  // Everything after the login is inside the try: a failure must still end the session and close connections.
  try {
    const report: ReplaceCertReport = {
      server: plan.origin.origin,
      api: client.generation,
      mode: plan.custom ? 'custom' : 'csr',
      dryRun: opts.dryRun === true,
      previous: summaryOfTls(await client.getTls()),
      findings: [],
      ok: false,
    };
    const spec = plan.custom ? customRequest(report, plan.custom) : await signedCsrRequest(client, plan, opts, report);
    if (spec && !opts.dryRun) await installAndVerify(client, plan, spec, opts, report);
    return finish(report);
  } finally {
    await client.close();
  }
}

/** Sets `ok`; findings and ok come last, so that a JSON report reads top-down. */
function finish(report: ReplaceCertReport): ReplaceCertReport {
  const { findings, ok: _ok, ...rest } = report;
  return { ...rest, findings, ok: !hasErrors(findings) };
}
