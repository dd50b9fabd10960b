import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fg from 'fast-glob';
import { describe, expect, it } from 'vitest';
import { TEMP_PREFIX } from '../../src/constants.js';
import { listFiles } from '../../src/util/walk.js';
import { tempDir } from '../helpers/temp.js';

/** A tree with what a depot may hold by mistake: dot files and folders, links to files, folders and nothing, a link back up, an unreadable folder. */
async function tree(dir: string): Promise<void> {
  const files = [
    'a.iso',
    'ESX/b.iso',
    'ESX/deep/c.iso',
    'ESX/.hidden',
    '.dot/d.iso',
    `ESX/${TEMP_PREFIX}b.iso`,
    `.dot/${TEMP_PREFIX}e`,
    'NSX/f.ova',
    'closed/g',
  ];
  for (const file of files) {
    await mkdir(join(dir, file, '..'), { recursive: true });
    await writeFile(join(dir, file), file);
  }
  await symlink(join(dir, 'ESX', 'b.iso'), join(dir, 'NSX', 'link.iso'));
  await symlink(join(dir, 'ESX', 'deep'), join(dir, 'NSX', 'linked-folder'));
  await symlink(join(dir, 'nowhere'), join(dir, 'NSX', 'broken.iso'));
  await symlink(dir, join(dir, 'ESX', 'deep', 'up'));
  await chmod(join(dir, 'closed'), 0);
}

describe('listFiles', () => {
  it('lists the files a glob lists, following links, skipping dot names unless asked and what cannot be read', async () => {
    const { dir, cleanup } = await tempDir('depotkit-walk-');
    try {
      await tree(dir);
      const sorted = (paths: string[]) => [...paths].sort();
      // The link back up is read once by the walk; the glob follows it round until the path is too long.
      const glob = async (pattern: string, dot = false) =>
        sorted((await fg(pattern, { cwd: dir, onlyFiles: true, suppressErrors: true, dot, deep: 4 })).filter((p) => !p.includes('/up/')));
      const all = await listFiles(dir);
      expect(sorted(all)).toEqual(await glob('**/*'));
      expect(all).toContain('NSX/linked-folder/c.iso');
      expect(all).toContain('NSX/link.iso');
      expect(all).not.toContain('NSX/broken.iso');
      expect(all).not.toContain('ESX/.hidden');
      // Root running the suite reads the closed folder anyway.
      if (process.getuid?.() !== 0) expect(all).not.toContain('closed/g');
      expect(sorted(await listFiles(dir, { depth: 2 }))).toEqual(await glob('*/*'));
      const temp = await listFiles(dir, { dot: true, name: (n) => n.startsWith(TEMP_PREFIX) });
      expect(sorted(temp)).toEqual(await glob(`**/${TEMP_PREFIX}*`, true));
      expect(sorted(temp)).toEqual([`.dot/${TEMP_PREFIX}e`, `ESX/${TEMP_PREFIX}b.iso`]);
      // A folder's own files come before its subfolders'.
      expect(all.indexOf('a.iso')).toBeLessThan(all.indexOf('ESX/b.iso'));
      expect(all.indexOf('ESX/b.iso')).toBeLessThan(all.indexOf('ESX/deep/c.iso'));
      expect(await listFiles(join(dir, 'missing'))).toEqual([]);
    } finally {
      await chmod(join(dir, 'closed'), 0o755);
      await cleanup();
    }
  });
});
