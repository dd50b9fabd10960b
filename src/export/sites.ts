import { join } from 'node:path';
import { EXPORT_DEBIAN, EXPORT_DEFAULT_PORT } from '../constants.js';
import { baseScope, listenHost, readsInPlace, render, usersFile } from './scope.js';
import type { StatusFiles } from './status.js';
import { checkCommand, groupStep } from './steps.js';
import { PUBLIC_MODE, type ExportContext, type Plan } from './types.js';
import { shellWord } from './values.js';

/** A site file that nginx or Apache includes, linked into its folder of sites; `setup` comes before the permissions, the test and the reload. */
function sitePlan(c: ExportContext, status: StatusFiles, text: string, debian: { siteDir: string; test: string; reload: string }, setup: string[]): Plan {
  const site = join(c.out, `${c.name}.conf`);
  return {
    files: [{ path: site, role: 'site', text, mode: PUBLIC_MODE }, ...usersFile(c), ...status.files],
    reads: readsInPlace(c),
    nextSteps: (unowned) => [
      `sudo ln -s ${shellWord(site)} ${debian.siteDir}/${c.name}.conf   # or copy it there; the files it names stay where they are`,
      ...setup,
      ...groupStep(c, unowned),
      `sudo ${debian.test} && sudo ${debian.reload}`,
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
  return sitePlan(c, status, text, EXPORT_DEBIAN.nginx, []);
}

export async function planApache(c: ExportContext, status: StatusFiles): Promise<Plan> {
  const debian = EXPORT_DEBIAN.apache;
  const text = await render('apache.conf', {
    ...baseScope(c),
    ...status.scope,
    listen: `${c.host ? listenHost(c.host) : '*'}:${c.port}`,
    modules: debian.modules.join(' '),
  });
  return sitePlan(c, status, text, debian, [
    `sudo a2enmod ${[...debian.modules, ...(status.files.length > 0 ? ['headers'] : [])].join(' ')} && sudo a2ensite ${c.name}`,
    ...(c.port === EXPORT_DEFAULT_PORT
      ? []
      : [
          `grep -qx 'Listen ${c.port}' ${debian.portsFile} || echo 'Listen ${c.port}' | sudo tee -a ${debian.portsFile}   # Apache listens on 443 only once ssl is enabled`,
        ]),
  ]);
}
