import { withOptions } from './option-table.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Command } from 'commander';
import { MGMT_CSR_VALIDITY_DAYS } from '../constants.js';
import { type ApiChoice } from '../vcenter/choices.js';
import type { ReplaceCertReport } from '../vcenter/index.js';
import { isSwappedPair, swappedPairMessage } from '../cert/pair.js';
import { readPemFile } from '../cert/pem.js';
import { EXIT, describeFsError, usageError } from '../util/errors.js';
import { formatFinding } from '../util/findings.js';
import { writeFileAtomic } from '../util/fs.js';
import { assertTogether, readUserPassword } from './options.js';
import { note, printJson, printLines, waitForShutdownSignal, warn } from './output.js';

interface ReplaceCertFlags {
  server: string;
  user: string;
  passwordFile?: string;
  passwordEnv?: string;
  ca: string;
  cn?: string;
  san?: string[];
  org?: string;
  orgUnit?: string;
  country?: string;
  state?: string;
  locality?: string;
  email?: string;
  keySize?: string;
  days: number;
  api: ApiChoice;
  serverCa: string[];
  insecure?: boolean;
  dryRun?: boolean;
  cert?: string;
  key?: string;
  waitTimeout: number;
  trustedChain?: boolean;
  json?: boolean;
}

export function registerMgmtCommands(program: Command): void {
  // vCenter is what users call the management server; `mgmt`, its first name, stays an alias.
  const mgmt = program.command('vcenter').alias('mgmt').description('vCenter: replace its TLS certificate, manage its trusted root chains');
  withOptions(
    mgmt
      .command('replace-cert')
      .description("have the server make a CSR, sign it with the toolkit's CA, install it, and wait until the restarted server serves it"),
  ).action(replaceCert);
  trustCommand(mgmt);
}

interface TrustFlags {
  server: string;
  user: string;
  passwordFile?: string;
  passwordEnv?: string;
  ca: string[];
  list?: boolean;
  remove?: boolean;
  api: ApiChoice;
  serverCa: string[];
  insecure?: boolean;
  json?: boolean;
}

/** `vcenter trust`: a CA into the server's trusted root chains (idempotent), or out of them, or the list. */
function trustCommand(mgmt: Command): void {
  withOptions(
    mgmt.command('trust').description("put a CA into vCenter's trusted root chains (nothing when a chain holds it already), list them, or remove it"),
  ).action(trust);
}

async function trust(flags: TrustFlags): Promise<void> {
  if (!flags.list && flags.ca.length === 0) throw usageError('Give the CA with --ca, or --list to see the trusted root chains.');
  if (flags.list && flags.remove) throw usageError('--list and --remove do not go together.');
  const { readCaPems } = await import('../cert/trust-source.js');
  const serverCaPems = flags.serverCa.length > 0 ? await readCaPems(flags.serverCa) : undefined;
  const caPem = flags.ca.length > 0 ? (await readCaPems(flags.ca)).join('') : '';
  const password = await readUserPassword(flags.user, flags);
  if (flags.insecure) warn("not validating the server's certificate (--insecure).");
  const mgmt = await import('../vcenter/index.js');
  const opts = { server: flags.server, user: flags.user, password, api: flags.api, serverCaPems, insecure: flags.insecure };
  if (flags.list) {
    const report = await mgmt.listVcenterTrust(opts);
    if (flags.json) return printJson(report);
    const lines = [`Trusted root chains of ${report.server} (/${report.api} API): ${report.chains.length}.`];
    for (const c of report.chains) {
      lines.push(`  ${c.chain}`);
      for (const cert of c.certificates) lines.push(`    ${cert.subject}, issued by ${cert.issuer}, valid to ${cert.notAfter}, SHA-256 ${cert.sha256}`);
    }
    return printLines(lines);
  }
  const report = await (flags.remove ? mgmt.untrustVcenterCa : mgmt.trustVcenterCa)({ ...opts, caPem });
  if (flags.json) return printJson(report);
  const what = `${report.ca.subject} (SHA-256 ${report.ca.sha256})`;
  if (flags.remove) {
    printLines([
      report.changed
        ? `Removed ${what} from ${report.server}: chains ${report.chains.join(', ')}.`
        : `${report.server} does not trust ${what}: nothing removed.`,
    ]);
  } else {
    printLines([
      report.changed
        ? `${report.server} now trusts ${what}: chain ${report.chains.join(', ')}.`
        : `${report.server} trusts ${what} already: chain ${report.chains.join(', ')}.`,
    ]);
  }
}

async function replaceCert(flags: ReplaceCertFlags): Promise<void> {
  assertTogether(flags as unknown as Record<string, unknown>, ['--cert', '--key'], 'a certificate made elsewhere is installed with its key');
  const ca = await readCa(flags.ca, !!flags.cert);
  const custom = flags.cert && flags.key ? await readCustom(flags.cert, flags.key) : undefined;
  const serverCaPems = flags.serverCa.length > 0 ? await (await import('../cert/trust-source.js')).readCaPems(flags.serverCa) : undefined;
  const password = await readUserPassword(flags.user, flags);
  // Warnings go to stderr, so they are printed with --json too: stdout stays parseable.
  if (flags.insecure) warn("not validating the server's current certificate (--insecure).");
  if (!flags.cert && flags.days !== MGMT_CSR_VALIDITY_DAYS) warn(csrDaysWarning(flags.days));
  const waiting = waitLine(!flags.json && process.stderr.isTTY === true);
  try {
    const { replaceCertificate } = await import('../vcenter/index.js');
    const report = await replaceCertificate({
      server: flags.server,
      user: flags.user,
      password,
      ca,
      custom,
      subject: {
        cn: flags.cn,
        san: flags.san,
        organization: flags.org,
        organizationUnit: flags.orgUnit,
        country: flags.country,
        state: flags.state,
        locality: flags.locality,
        email: flags.email,
      },
      keySize: flags.keySize === undefined ? undefined : Number(flags.keySize),
      days: flags.days,
      api: flags.api,
      serverCaPems,
      insecure: flags.insecure,
      dryRun: flags.dryRun,
      trustedChain: flags.trustedChain,
      waitTimeoutMs: flags.waitTimeout * 1000,
      onStep: flags.json ? undefined : (s) => (waiting.clear(), note(s)),
      onWait: (s) => waiting.show(`  waiting ${Math.round(s.elapsedMs / 1000)} s: ${s.last}`),
    });
    waiting.clear();
    if (flags.json) printJson(report);
    else printLines(formatReport(report));
    process.exitCode = report.ok ? EXIT.ok : EXIT.problems;
  } finally {
    waiting.clear();
  }
}

/** `depotkit sim vcenter` (alias `sim mgmt`): added to the `sim` command group. */
export function registerSimMgmtCommand(sim: Command): void {
  withOptions(
    sim
      .command('vcenter')
      .alias('mgmt')
      .description("a vCenter on HTTPS: the certificate API of both generations and vLCM's depot API (its syncs fetch the depot), until interrupted"),
  ).action(
    async (flags: {
      host: string;
      port: number;
      hostname?: string;
      user: string;
      passwordFile?: string;
      passwordEnv?: string;
      restartMs: number;
      certOut?: string;
      json?: boolean;
    }) => {
      const password = await readUserPassword(flags.user, flags);
      // Listening for signals before the port opens: whoever finds it open may stop us at once (a stop while
      // starting closes the simulator once started).
      const shutdown = waitForShutdownSignal();
      // Loaded here: the simulator's web stack is not needed by any other command.
      const { startMgmtSimulator } = await import('../simulators/vcenter/index.js');
      const sim = await startMgmtSimulator({
        host: flags.host,
        port: flags.port,
        hostname: flags.hostname,
        users: { [flags.user]: password },
        restartMs: flags.restartMs,
      });
      if (flags.certOut) await writeFileAtomic(flags.certOut, sim.currentCertPem(), { mode: 0o644, force: true });
      if (flags.json)
        printJson({ url: sim.url, port: sim.port, hostname: sim.hostname, user: flags.user, ...(flags.certOut ? { certificate: flags.certOut } : {}) });
      else {
        printLines([`Management server simulator on ${sim.url} (name ${sim.hostname}), user ${flags.user}.`]);
        note('Stop it with Ctrl-C.');
      }
      await shutdown;
      await sim.close();
    },
  );
}

/**
 * The toolkit's CA signs the server's CSR, so it can give any validity; but the
 * server's own CSR flow implies the fixed two years, which some versions may insist on.
 */
function csrDaysWarning(days: number): string {
  return (
    `--days ${days}: a certificate for the server's own CSR is valid for ${MGMT_CSR_VALIDITY_DAYS} days (2 years) on the real server; ` +
    `the CA signs ${days} days as asked, but some server versions may refuse it. For another validity, the supported way is a certificate made elsewhere with --cert and --key.`
  );
}

/** The signing CA: a CA folder with its key; for --cert, whose CA only names itself, a CA certificate file or folder. */
async function readCa(path: string, certOnly: boolean): Promise<{ certPem: string; keyPem?: string }> {
  if (certOnly) return { certPem: (await (await import('../cert/trust-source.js')).readCaPems([path])).join('') };
  const pki = await import('../cert/index.js');
  const ca = await pki.loadCaDir(path);
  // An intermediate CA's ca-cert.pem goes on with its issuers up to the root: all of them are sent as root_cert.
  return { ...ca, certPem: (await readPemFile(join(path, pki.CA_CERT_FILE), 'CERTIFICATE')).join('') };
}

/** The certificate made elsewhere and its key, said to be swapped when they are (OpenSSL says "no start line"). */
async function readCustom(certFile: string, keyFile: string): Promise<{ certPem: string; keyPem: string }> {
  const read = async (path: string) => readFile(path, 'utf8').catch((err: unknown) => Promise.reject(describeFsError(err, path)));
  const [certPem, keyPem] = [await read(certFile), await read(keyFile)];
  if (isSwappedPair(certPem, keyPem)) throw usageError(swappedPairMessage(`--cert ${certFile}`, `--key ${keyFile}`));
  return { certPem, keyPem };
}

/** One line on a terminal, rewritten in place while the server restarts. */
export function waitLine(enabled: boolean): { show(text: string): void; clear(): void } {
  let shown = false;
  return {
    show(text) {
      if (!enabled) return;
      process.stderr.write(`\r\x1b[2K${text}`);
      shown = true;
    },
    clear() {
      if (shown) process.stderr.write('\r\x1b[2K');
      shown = false;
    },
  };
}

export function formatReport(r: ReplaceCertReport): string[] {
  const lines: string[] = [];
  const cert = r.certificate;
  if (r.dryRun) {
    lines.push(`Dry run on ${r.server} (/${r.api} API): logged in, nothing changed.`);
    lines.push(`  serving now: ${r.previous.subject}, issued by ${r.previous.issuer}, valid to ${r.previous.notAfter}`);
    if (r.csrSpec) {
      lines.push(`  would request a CSR for ${r.csrSpec.common_name} (SAN ${r.csrSpec.subject_alt_name?.join(', ')}), sign it with the CA and install it`);
    }
    if (cert) lines.push(`  would install: ${cert.subject}, issued by ${cert.issuer}, SAN ${cert.san.join(', ')}, valid to ${cert.notAfter}`);
  } else if (cert) {
    lines.push(`Replaced the certificate of ${r.server} (/${r.api} API).`);
    lines.push(`  before: ${r.previous.subject}, issued by ${r.previous.issuer}, SHA-256 ${r.previous.sha256}`);
    lines.push(`  now:    ${cert.subject}, issued by ${cert.issuer}, SAN ${cert.san.join(', ')}, valid to ${cert.notAfter}, SHA-256 ${cert.sha256}`);
    if (r.trustedChain)
      lines.push(
        `  trusted: the CA is in the server's trusted root chains (${r.trustedChain.chains.join(', ')}${r.trustedChain.changed ? ', added now' : ''})`,
      );
    if (r.restart) lines.push(`  restart: served after ${(r.restart.waitedMs / 1000).toFixed(1)} s`);
    if (r.verified?.trusted && r.verified.hostname) lines.push('  verified: trusted by the CA and valid for the host name');
  }
  for (const f of r.findings) lines.push(...formatFinding(f).map((l) => `  ${l}`));
  return lines;
}
