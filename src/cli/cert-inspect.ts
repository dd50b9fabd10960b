import { withOptions } from './option-table.js';
import { join } from 'node:path';
import type { Command } from 'commander';
import { CA_CERT_FILE } from '../cert/files.js';
import { EXIT, usageError } from '../util/errors.js';
import { hasErrors, type Finding } from '../util/findings.js';
import { exists } from '../util/fs.js';
import { PEM_LIMITS } from '../util/limits.js';
import { loadPki } from './cert-shared.js';
import { printJson, printLines } from './output.js';

interface InspectFlags {
  host?: string;
  ip: string[];
  ca: string[];
  json?: boolean;
}

/** `depotkit cert inspect`: a certificate, its chain or a request shown, and a certificate linted as the installer would. */
export function registerCertInspect(cert: Command): void {
  withOptions(
    cert
      .command('inspect <pem>')
      .description(
        'show a certificate (the first of a chain file) or a CSR; with --host or --ca, lint the certificate as the installer would (exit 1 on errors)',
      ),
  ).action(inspect);
}

async function inspect(file: string, opts: InspectFlags): Promise<void> {
  const { readPemBlocks, inspectCsr, readCertificate, requestLines, inspectionLines } = await loadPki();
  // A leaf and its issuers, or a request: a file of thousands of certificates is refused at once.
  const blocks = await readPemBlocks(file, ['CERTIFICATE', 'CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST'], {
    maxBlocks: PEM_LIMITS.maxChainCertificates,
    what: 'certificate chain',
  });
  if (blocks[0]!.label !== 'CERTIFICATE') {
    // A request: show what it asks for (its signature is verified on reading).
    if (opts.host !== undefined || opts.ca.length > 0 || opts.ip.length > 0)
      throw usageError(`${file} is a certificate request; --host, --ip and --ca lint certificates.`);
    const csr = inspectCsr(blocks[0]!.pem, file);
    if (opts.json) return printJson({ request: csr });
    return printLines(requestLines(csr));
  }
  const certs = blocks.filter((b) => b.label === 'CERTIFICATE').map((b) => b.pem);
  const infos = certs.map((b, i) => readCertificate(b, i === 0 ? file : `Certificate ${i + 1} of ${file}`));
  const findings = await lint(certs, opts);
  if (opts.json) printJson({ certificate: infos[0], chain: infos.slice(1), ...(findings ? { ok: !hasErrors(findings), findings } : {}) });
  else printLines(inspectionLines(infos, findings, opts.host));
  process.exitCode = findings && hasErrors(findings) ? EXIT.problems : EXIT.ok;
}

/** The lint's findings, when a host, an IP or a CA asks for it. */
async function lint(certs: string[], opts: InspectFlags): Promise<Finding[] | undefined> {
  const { readCaPems, lintServerCertificate } = await loadPki();
  const caPems = opts.ca.length > 0 ? await readCaPems(opts.ca) : undefined;
  // A CA folder (from cert ca) names itself in the fix commands.
  const caDirs = (await Promise.all(opts.ca.map(async (f) => ((await exists(join(f, CA_CERT_FILE))) ? f : undefined)))).filter(
    (d): d is string => d !== undefined,
  );
  if (opts.host === undefined && caPems === undefined && opts.ip.length === 0) return undefined;
  if (opts.host !== undefined && opts.host.trim() === '') throw usageError('--host must not be empty.');
  return lintServerCertificate(certs.join(''), { host: opts.host, ips: opts.ip, caPems, ...(caDirs.length === 1 ? { caDir: caDirs[0] } : {}) });
}
