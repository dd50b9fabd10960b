import { join } from 'node:path';
import { reloadCommand } from './reload.js';
import { EXPORT_DEBIAN } from '../constants.js';
import { basicAuthDirective, installedCaddyVersion } from './caddy.js';
import { foldersClosedTo } from './folders.js';
import { baseScope, render, usersFile } from './scope.js';
import type { StatusFiles } from './status.js';
import { checkCommand, groupStep } from './steps.js';
import { PUBLIC_MODE, type ExportContext, type ExportOptions, type Plan } from './types.js';
import { groupId, shellWord, tlsSuites } from './values.js';

/** A whole Caddyfile, for the Caddy given or installed here (its Basic auth directive changed name in 2.8). */
export async function planCaddy(options: ExportOptions, c: ExportContext, status: StatusFiles): Promise<Plan> {
  const detected = options.caddyVersion ?? (await installedCaddyVersion());
  const directive = detected ? basicAuthDirective(detected) : 'basicauth';
  if (!detected)
    c.warnings.push(
      'No caddy here to ask its version and no `caddyVersion`: written with basicauth, which Caddy 2.6 (Debian 12) needs and later versions accept with a deprecation warning.',
    );
  const caddyfile = join(c.out, 'Caddyfile');
  const text = await render('Caddyfile', {
    ...baseScope(c),
    ...status.scope,
    host: c.host ?? '',
    users: c.users?.file ?? '',
    basicAuthDirective: directive,
    caddyVersion: detected ?? '2',
    tls12Ciphers: tlsSuites().tls12Iana.join(' '),
  });
  const debian = EXPORT_DEBIAN.caddy;
  const closed = await foldersClosedTo(c.cert && c.key ? [c.cert, c.key] : [], await groupId(c.group));
  return {
    files: [{ path: caddyfile, role: 'caddyfile', text, mode: PUBLIC_MODE }, ...usersFile(c), ...status.files],
    // Caddy reads the users from its own file, written here, whatever was given.
    reads: { cert: c.cert, key: c.key },
    caddy: { ...(detected ? { version: detected } : {}), directive },
    nextSteps: (unowned) => [
      `sudo cp ${shellWord(caddyfile)} ${debian.caddyfile}   # a whole Caddyfile: it replaces the default one; the files it names stay where they are`,
      // Caddy runs as its own user: it reads the key and the users when it loads the configuration.
      ...groupStep(c, unowned, c.key ? [c.key] : []),
      ...(closed.length === 0
        ? []
        : [
            `sudo chgrp ${c.group} ${closed.map(shellWord).join(' ')} && sudo chmod g+x ${closed.map(shellWord).join(' ')}   # Caddy, as its own user, reaches the certificate and key through these`,
          ]),
      `echo ${debian.migrateSysctl}=1 | sudo tee ${debian.sysctlFile} && sudo sysctl -p ${debian.sysctlFile}   # each reload moves Caddy to a new socket: the connections waiting on the old one go to it, not reset`,
      reloadCommand('caddy', c.name, 'sudo '),
      checkCommand(c),
    ],
  };
}
