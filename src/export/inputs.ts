import { basename, dirname, join, resolve } from 'node:path';
import { DEPOT_ROOT_DIR, EXPORT_DEBIAN, EXPORT_DEFAULT_NAME, EXPORT_DEFAULT_PORT } from '../constants.js';
import { usageError } from '../util/errors.js';
import { isDirectory } from '../util/fs.js';
import { assertIssuedNames, exportCertificate } from './certificate.js';
import { openPrefixes } from './open.js';
import type { ExportContext, ExportOptions } from './types.js';
import { planUsers } from './users.js';
import { configPath, exportName, hostValue } from './values.js';

const ACCOUNT_NAME = /^[a-z_][a-z0-9_-]{0,31}$/;

/** The options checked and resolved before anything is written; what will not work as the user may expect is said in `warnings`. */
export async function exportContext(options: ExportOptions): Promise<ExportContext> {
  const warnings: string[] = [];
  const name = exportName(options.name ?? EXPORT_DEFAULT_NAME);
  const root = await depotRoot(options, warnings);
  const out = configPath(resolve(options.out), '`out`');
  const port = options.port ?? EXPORT_DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw usageError(`The port must be between 1 and 65535, not ${port}.`);
  const host = options.host === undefined || options.host === '0.0.0.0' ? undefined : hostValue(options.host, '`host`');
  const { cert, key, names } = await exportCertificate(options, warnings);
  assertIssuedNames(options);
  const serverName = hostValue(options.serverName ?? names[0] ?? options.dns?.[0] ?? 'localhost', '`serverName`');
  if (options.serverName === undefined && names.length === 0 && !options.dns?.length) {
    warnings.push('No `serverName` and no DNS name in a certificate: "localhost" is written; give the FQDN the installer will use.');
  }
  const open = await openPrefixes(options, root, warnings);
  if (!options.auth) warnings.push('No `user`/`passwordFile` or `htpasswdFile`: anyone who can reach the port can download the depot.');
  const usersFile = join(out, options.target === 'caddy' ? `${name}.users` : `${name}.htpasswd`);
  const users = options.auth ? await planUsers(options.target, options.auth, usersFile) : undefined;
  if (users) {
    configPath(users.file, '`htpasswdFile`');
    warnings.push(...users.warnings);
  }
  const { serviceUser, group } = accounts(options, name);
  const accessLog = options.accessLog === undefined || options.accessLog === '-' ? undefined : configPath(resolve(options.accessLog), '`accessLog`');
  return {
    name,
    root,
    out,
    port,
    host,
    serverName,
    urlPort: port === EXPORT_DEFAULT_PORT ? '' : `:${port}`,
    cert,
    key,
    users,
    open,
    group,
    serviceUser,
    accessLog,
    warnings,
  };
}

/** The web root: a folder, best one with PROD/ in it (not PROD/ itself). */
async function depotRoot(options: ExportOptions, warnings: string[]): Promise<string> {
  const root = configPath(resolve(options.root), 'The depot folder');
  if (!(await isDirectory(root))) throw usageError(`${root} is not a folder.`);
  if (!(await isDirectory(join(root, DEPOT_ROOT_DIR)))) {
    if (basename(root) === DEPOT_ROOT_DIR) {
      throw usageError(
        `${root} is the ${DEPOT_ROOT_DIR} folder itself; the installer fetches /${DEPOT_ROOT_DIR}/..., so export the folder that contains it.`,
        `depotkit export ${options.target} ${dirname(root)} \`out\` ${options.out} (with the other options as before)`,
      );
    }
    warnings.push(`${root} has no ${DEPOT_ROOT_DIR}/ folder; the installer will find nothing there.`);
  }
  return root;
}

/** The service's user and the group that reads the users file: the server's workers' (nginx, Apache, Caddy) or the service's own. */
function accounts(options: ExportOptions, name: string): { serviceUser: string; group: string } {
  const serviceUser = options.serviceUser ?? name;
  if (!ACCOUNT_NAME.test(serviceUser)) throw usageError(`\`serviceUser\` "${serviceUser}" is not a user name.`);
  const group = options.group ?? (options.target === 'systemd' ? serviceUser : EXPORT_DEBIAN[options.target].group);
  if (!ACCOUNT_NAME.test(group)) throw usageError(`\`group\` "${group}" is not a group name.`);
  return { serviceUser, group };
}
