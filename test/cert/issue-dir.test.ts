import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCa, issueCert, writeCaDir } from '../../src/cert/index.js';
import { tempDir } from '../helpers/temp.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  await writeCaDir(join(dir, 'ca'), await createCa({ cn: 'Folder CA', days: 30, keySize: 2048 }));
});
afterAll(() => cleanup());

describe('issueCert: a server certificate into a folder', () => {
  it('writes the key 0600, the certificate and the chain, and says what the caller should know of the result', async () => {
    const long = `${'a'.repeat(60)}.lab.local`;
    const issued = await issueCert(join(dir, 'server'), { caDir: join(dir, 'ca'), dns: [long, 'depot'], keySize: 2048 });
    expect((await stat(issued.keyPath)).mode & 0o777).toBe(0o600);
    expect(issued.certificate.san.dns).toEqual([long, 'depot']);
    // The CA ends in 30 days, the first name cannot be the CN: both said, in the library's words.
    expect(issued.warnings).toHaveLength(2);
    expect(issued.warnings[0]).toMatch(/^the CA expires on .*, so the certificate ends then instead of after 825 days\.$/);
    expect(issued.warnings[1]).toContain('so the CN is depot');
    await expect(issueCert(join(dir, 'server'), { caDir: join(dir, 'ca'), dns: ['depot'] })).rejects.toThrow(/already exists/);
  });
});
