import { chown } from 'node:fs/promises';
import { usageError } from '../util/errors.js';
import { exists, writeFileAtomic } from '../util/fs.js';
import { makeExportFolders } from './folders.js';
import { SECRET_MODE, type ExportContext, type ExportedFile, type PlannedFile } from './types.js';
import { groupId } from './values.js';

/**
 * Writes the planned files (none replaced without `force`), their folders 0750 and the secret ones 0640,
 * giving both the server's group where this process may. The folders it could not give the group are
 * kept in `c.ungroupedFolders`, for the next steps.
 */
export async function writePlanned(files: PlannedFile[], c: ExportContext, force: boolean | undefined): Promise<ExportedFile[]> {
  if (!force) {
    for (const f of files) if (await exists(f.path)) throw usageError(`${f.path} already exists.`, 'Use `force` to replace it.');
  }
  const gid = await groupId(c.group);
  const canChown = gid !== undefined && (process.getuid?.() === 0 || (process.getgroups?.() ?? []).includes(gid));
  const { ungrouped } = await makeExportFolders(
    c.out,
    files.map((f) => f.path),
    canChown ? gid : undefined,
  );
  c.ungroupedFolders = ungrouped;
  const written: ExportedFile[] = [];
  for (const f of files) {
    await writeFileAtomic(f.path, f.text, { mode: f.mode, force });
    let group: string | undefined;
    if (f.mode === SECRET_MODE && canChown) {
      await chown(f.path, -1, gid);
      group = c.group;
    }
    written.push({ path: f.path, role: f.role, mode: f.mode, ...(group ? { group } : {}) });
  }
  return written;
}
