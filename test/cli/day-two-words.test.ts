import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { statusData } from '../../src/server/status-data.js';
import { renderStatusPage } from '../../src/server/status-page.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

describe('words a day-two operator reads', () => {
  it('serve of a folder that is not there says so, as depot verify does', async () => {
    const serve = await runCli(['serve', '/no/such/dir', '--http']);
    const verify = await runCli(['depot', 'verify', '/no/such/dir']);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toContain('depotkit: /no/such/dir does not exist.');
    expect(serve.stderr.split('\n').slice(0, 2)).toEqual(verify.stderr.split('\n').slice(0, 2));
  });

  it('the status page counts one hashed file in the singular', async () => {
    const { dir, cleanup } = await tempDir('depotkit-words-');
    try {
      await makeDemoDepot(join(dir, 'depot'), { binarySize: 1 });
      const data = await statusData(join(dir, 'depot'), { url: 'http://depot.lab.local' });
      const page = (n: number) => renderStatusPage({ ...data, summary: { ...data.summary, hashVerified: n } });
      expect(page(1)).toContain(' 1 file was hashed against the catalog');
      expect(page(2)).toContain(' 2 files were hashed against the catalog');
    } finally {
      await cleanup();
    }
  });
});
