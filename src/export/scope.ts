import { SERVE_AUTH_REALM } from '../constants.js';
import { loadTemplate, renderTemplate, type TemplateName, type TemplateScope } from './template.js';
import { SECRET_MODE, type ExportContext, type ExportReport, type PlannedFile } from './types.js';
import { tlsSuites } from './values.js';
import { urlHost } from '../util/url.js';

/** templates/<name> filled in. */
export async function render(name: TemplateName, scope: TemplateScope): Promise<string> {
  return renderTemplate(await loadTemplate(name), scope, `templates/${name}`);
}

/** The values every template reads. */
export function baseScope(c: ExportContext): TemplateScope {
  const suites = tlsSuites();
  return {
    name: c.name,
    root: c.root,
    port: c.port,
    serverName: c.serverName,
    urlPort: c.urlPort,
    cert: c.cert ?? '',
    key: c.key ?? '',
    realm: SERVE_AUTH_REALM,
    auth: Boolean(c.users),
    htpasswd: c.users?.file ?? '',
    open: c.open.map((prefix) => ({ prefix })),
    hasOpen: c.open.length > 0,
    accessLog: c.accessLog ?? '',
    tls12Ciphers: suites.tls12.join(':'),
    tls13Ciphers: suites.tls13.join(':'),
  };
}

/** The files the configuration reads where they are: the certificate, its key, and a given htpasswd file. */
export function readsInPlace(c: ExportContext): ExportReport['reads'] {
  return { cert: c.cert, key: c.key, ...(c.users && c.users.text === undefined ? { htpasswd: c.users.file } : {}) };
}

/** The users file, when the export writes one (not for an htpasswd file read in place). */
export function usersFile(c: ExportContext): PlannedFile[] {
  return c.users?.text !== undefined ? [{ path: c.users.file, role: 'users', text: c.users.text, mode: SECRET_MODE }] : [];
}

/** A listening address as nginx and Apache write it: an IPv6 address in brackets. */
export function listenHost(host: string): string {
  return urlHost(host);
}
