import type { Command } from 'commander';
import { registerCertCa } from './cert-ca.js';
import { registerCertInspect } from './cert-inspect.js';
import { registerCertIssue, registerCertSignCsr } from './cert-issue.js';
import { registerCertRenew } from './cert-renew.js';

/** `depotkit cert`: one registration per command, in the order of the flow. */
export function registerCertCommands(program: Command): void {
  const cert = program.command('cert').description('a private CA, server certificates, CSR signing, inspection');
  registerCertCa(cert);
  registerCertIssue(cert);
  registerCertRenew(cert);
  registerCertSignCsr(cert);
  registerCertInspect(cert);
}
