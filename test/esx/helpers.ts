import { cp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import yazl from 'yazl';
import { listFiles } from '../../src/util/walk.js';

/** A zip of these entries, in memory, as a hostile or hand-made metadata zip would be. */
export async function zipOf(entries: Record<string, string | Buffer>, options: { compress?: boolean } = {}): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, data] of Object.entries(entries)) {
    zip.addBuffer(typeof data === 'string' ? Buffer.from(data) : data, name, { compress: options.compress ?? true });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** An offline bundle (`*-depot.zip`) of an ESX depot folder: the same tree in one zip. */
export async function bundleOf(dir: string, zipPath: string, replace: Record<string, Buffer> = {}): Promise<void> {
  const zip = new yazl.ZipFile();
  for (const file of await listFiles(dir)) {
    if (replace[file]) zip.addBuffer(replace[file], file);
    else zip.addFile(join(dir, file), file);
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  await writeFile(zipPath, Buffer.concat(chunks));
}

/** A copy of a folder to break one thing in. */
export async function copyOf(dir: string, to: string): Promise<string> {
  await cp(dir, to, { recursive: true });
  return to;
}
