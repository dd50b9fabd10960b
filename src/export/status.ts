import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { STATUS_PAGE_CSP, renderStatusPage } from '../server/status-page.js';
import { statusData } from '../server/status-data.js';
import type { TemplateScope } from './template.js';
import { PUBLIC_MODE, type ExportContext, type ExportOptions, type PlannedFile } from './types.js';

export interface StatusFiles {
  files: PlannedFile[];
  scope: TemplateScope;
}

/**
 * The static status page and the CA certificate it links to, and the template values that serve them;
 * nothing when not asked for (or for systemd, where depotkit serve shows the live page itself).
 */
export async function statusFiles(options: ExportOptions, c: ExportContext): Promise<StatusFiles> {
  const none = { statusDir: '', statusCa: false, statusCsp: STATUS_PAGE_CSP, hasProtectedMatcher: c.open.length > 0 };
  if (!options.statusPage || options.target === 'systemd' || !c.cert) return { files: [], scope: none };
  const dir = join(c.out, 'status');
  const certPem = await readFile(c.cert, 'utf8');
  const auth = !options.auth ? undefined : 'user' in options.auth ? { user: options.auth.user } : { htpasswd: true as const };
  // The page links the CA to /ca.pem only when there is a CA certificate to write there.
  const data = await statusData(c.root, {
    certPem,
    url: `https://${c.serverName}${c.urlPort}`,
    ...(auth ? { auth } : {}),
    openPrefixes: c.open,
    caPath: '/ca.pem',
  });
  const caPem = data.ca.pem;
  const files: PlannedFile[] = [{ path: join(dir, 'index.html'), role: 'status-page', text: renderStatusPage(data, { snapshot: true }), mode: PUBLIC_MODE }];
  if (caPem) files.push({ path: join(dir, 'ca.pem'), role: 'ca', text: caPem, mode: PUBLIC_MODE });
  return { files, scope: { statusDir: dir, statusCa: Boolean(caPem), statusCsp: STATUS_PAGE_CSP, hasProtectedMatcher: c.open.length > 0 || Boolean(caPem) } };
}
