import { join } from 'node:path';
import { EXPORT_DEBIAN, EXPORT_DEFAULT_PORT } from '../constants.js';
import { reloadCommand } from './reload.js';
import { baseScope, listenHost, readsInPlace, render, usersFile } from './scope.js';
import type { StatusFiles } from './status.js';
import { checkCommand, groupStep } from './steps.js';
import { PUBLIC_MODE, type ExportContext, type Plan } from './types.js';
import { shellWord } from './values.js';

/** A site file that nginx or Apache includes, linked into its folder of sites; `setup` comes before the permissions, the test and the reload. */
function sitePlan(c: ExportContext, status: StatusFiles, text: string, server: 'nginx' | 'apache', setup: string[]): Plan {
  const debian = EXPORT_DEBIAN[server];
  const site = join(c.out, `${c.name}.conf`);
  return {
    files: [{ path: site, role: 'site', text, mode: PUBLIC_MODE }, ...usersFile(c), ...status.files],
    reads: readsInPlace(c),
    nextSteps: (unowned) => [
      `sudo ln -s ${shellWord(site)} ${debian.siteDir}/${c.name}.conf   # or copy it there; the files it names stay where they are`,
      ...setup,
      ...groupStep(c, unowned),
      reloadCommand(server, c.name, 'sudo '),
      checkCommand(c),
    ],
  };
}

export async function planNginx(c: ExportContext, status: StatusFiles): Promise<Plan> {
  const text = await render('nginx.conf', {
    ...baseScope(c),
    ...status.scope,
    listen: c.host ? `${listenHost(c.host)}:${c.port}` : String(c.port),
  });
  return sitePlan(c, status, text, 'nginx', []);
}

export async function planApache(c: ExportContext, status: StatusFiles): Promise<Plan> {
  const debian = EXPORT_DEBIAN.apache;
  const text = await render('apache.conf', {
    ...baseScope(c),
    ...status.scope,
    listen: `${c.host ? listenHost(c.host) : '*'}:${c.port}`,
    modules: debian.modules.join(' '),
  });
  return sitePlan(c, status, text, 'apache', [
    `sudo a2enmod ${[...debian.modules, ...(status.files.length > 0 ? ['headers'] : [])].join(' ')} && sudo a2ensite ${c.name}`,
    ...(c.port === EXPORT_DEFAULT_PORT
      ? []
      : [
          `grep -qx 'Listen ${c.port}' ${debian.portsFile} || echo 'Listen ${c.port}' | sudo tee -a ${debian.portsFile}   # Apache listens on 443 only once ssl is enabled`,
        ]),
  ]);
}
