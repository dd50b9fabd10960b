import { DEPOT_PATHS } from '../constants.js';
import type { ExportContext } from './types.js';
import { shellWord } from './values.js';

/** The check that must accept the depot through the server: the operation and each value after its option's name. */
export function checkCommand(c: ExportContext): string {
  const words = ['`checkDepot`', shellWord(`https://${c.serverName}${c.urlPort}`), '`caPems`', '<the CA certificate the installer trusts>'];
  if (c.users) words.push('`user`', shellWord(c.users.user), '`passwordFile`', `<${c.users.user}'s password file>`);
  for (const p of c.open) if (p !== DEPOT_PATHS.hclDir) words.push('`openPaths`', shellWord(`${p}/`));
  return words.join(' ');
}

/** The files that need the server's group, and the htpasswd file read in place too. */
export function groupStep(c: ExportContext, unowned: string[], extra: string[] = []): string[] {
  const files = [...unowned, ...extra];
  if (c.users?.text === undefined && c.users) files.push(c.users.file);
  const folders = c.ungroupedFolders ?? [];
  const steps =
    folders.length === 0 ? [] : [`sudo chgrp ${c.group} ${folders.map(shellWord).join(' ')}   # made 0750: the ${c.group} group must reach the files in it`];
  if (files.length === 0) return steps;
  const list = [...new Set(files)].map(shellWord).join(' ');
  return [...steps, `sudo chgrp ${c.group} ${list} && sudo chmod 0640 ${list}   # the ${c.group} group must read these`];
}
