// The status page in a real browser: Debian's chromium driven by playwright-core (no browser download here;
// .ci/run installs the package). Skipped when /usr/bin/chromium is absent.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUIRED_COMPONENTS } from '../../src/constants.js';
import { REPO_ROOT, tempDir } from '../helpers/temp.js';
import { spawnServe, type ServeChild } from '../server/helpers.js';
import { demoDepot, writePki } from '../server/status-helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const RESULTS = join(REPO_ROOT, 'test-results');
const PASSWORD = 'Browser-Secret-7';
const VCENTER_ISO = 'VMware-VCSA-all-9.0.0.0.24755230.iso';

/**
 * WCAG 2 contrast ratio of the text colour of every element matching a selector against the background it
 * sits on (the nearest opaque ancestor's). Browser code, as text: the project's TypeScript has no DOM types.
 */
const LOWEST_CONTRAST = `(selector) => {
  const rgb = (css) => (css.match(/[\\d.]+/g) || []).slice(0, 3).map(Number);
  const luminance = (c) => {
    const [r, g, b] = c.map((v) => v / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const background = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const bg = getComputedStyle(e).backgroundColor;
      if (bg !== 'transparent' && !/rgba\\(.*,\\s*0\\)$/.test(bg)) return rgb(bg);
    }
    return [255, 255, 255];
  };
  let lowest = Infinity;
  for (const el of document.querySelectorAll(selector)) {
    const a = luminance(rgb(getComputedStyle(el).color));
    const b = luminance(background(el));
    lowest = Math.min(lowest, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05));
  }
  return lowest;
}`;

function lowestContrast(page: Page, selector: string): Promise<number> {
  return page.evaluate(`(${LOWEST_CONTRAST})(${JSON.stringify(selector)})`);
}

describe.skipIf(!existsSync(CHROMIUM))('the status page in Chromium', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let root: string;
  let serve: ServeChild;
  let profile: string;
  let context: BrowserContext;
  const problems: string[] = [];

  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir('depotkit-browser-'));
    root = join(dir, 'depot');
    await demoDepot(root);
    const pki = await writePki(join(dir, 'pki'));
    await writeFile(join(dir, 'password'), `${PASSWORD}\n`);
    serve = await spawnServe([
      root,
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--cert',
      pki.chain,
      '--key',
      pki.key,
      '--user',
      'depot',
      '--password-file',
      join(dir, 'password'),
      '--workers',
      '2',
    ]);
    await mkdir(RESULTS, { recursive: true });
    // A fresh profile each run: nothing remembered from another.
    profile = await mkdtemp(join(tmpdir(), 'depotkit-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: ARGS,
      headless: true,
      // The CA is the test's own; the browser's trust store is not the point here.
      ignoreHTTPSErrors: true,
      httpCredentials: { username: 'depot', password: PASSWORD },
      viewport: { width: 1280, height: 900 },
    });
    context.on('page', (page) => watch(page));
  });
  afterAll(async () => {
    await context?.close();
    serve?.child.kill('SIGKILL');
    if (profile) await rm(profile, { recursive: true, force: true });
    await cleanup?.();
  });

  function watch(page: Page): void {
    page.on('console', (msg) => {
      if (msg.type() === 'error' || msg.type() === 'warning') problems.push(`console ${msg.type()}: ${msg.text()}`);
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()} ${req.failure()?.errorText ?? ''}`));
  }

  async function open(viewport?: { width: number; height: number }): Promise<Page> {
    const page = await context.newPage();
    if (viewport) await page.setViewportSize(viewport);
    const response = await page.goto(`${serve.url}/`);
    expect(response?.status()).toBe(200);
    return page;
  }

  it("renders with headings, table semantics and contrast, names the demo depot's components, without a console error", async () => {
    const page = await open();
    expect(await page.title()).toBe(`Offline depot – https://depot.lab.local:${serve.port}`);
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Offline depot');
    const h2 = await page.getByRole('heading', { level: 2 }).allTextContents();
    expect(h2).toEqual(['Give this to the installer', 'Releases', 'vSAN hardware compatibility list', 'vCenter upgrade metadata', 'Server certificate']);
    await expect.poll(() => page.locator('.verdict').textContent()).toMatch(/^✓ Complete: all 16 files/);

    // One table per release, captioned, its columns, component groups and file rows headed with their scope.
    const table = page.getByRole('table', { name: 'Files of release 9.0.0.0' });
    expect(await table.count()).toBe(1);
    expect(await table.locator('thead th[scope="col"]').allTextContents()).toEqual(['File', 'Size', 'Status']);
    expect(await table.locator('tbody th[scope="row"]').count()).toBe(16);
    const components = (await table.locator('tbody th[scope="rowgroup"]').allTextContents()).map((t) => t.split(' ')[0]);
    expect(components).toHaveLength(16);
    for (const c of REQUIRED_COMPONENTS) expect(components).toContain(c);
    expect(await table.getByRole('row', { name: new RegExp(VCENTER_ISO.replace(/\./g, '\\.')) }).textContent()).toContain('✓ present');

    // What to give the installer, and the CA certificate's download, which answers without credentials.
    // depot.lab.local resolves only where the installer is: the check line reaches the server by address, --as-host the name.
    expect(await page.locator('pre code').first().textContent()).toBe(
      `depotkit check https://127.0.0.1:${serve.port} --as-host depot.lab.local --ca depot-ca.pem --user depot --password-file depot.pass`,
    );
    const link = page.getByRole('link', { name: 'Download the CA certificate' });
    expect(await link.getAttribute('href')).toBe('/ca.pem');
    const ca = await context.request.get(`${serve.url}/ca.pem`);
    expect(ca.status()).toBe(200);
    expect(await ca.text()).toMatch(/^-----BEGIN CERTIFICATE-----\n/);
    expect(await page.content()).not.toContain(PASSWORD);

    // Text and state colours keep at least 4.5:1 (WCAG AA) against their background.
    expect(await lowestContrast(page, 'body, td, th, dt, dd, p, code, .ok, .bad, .muted, caption')).toBeGreaterThanOrEqual(4.5);
    await page.screenshot({ path: join(RESULTS, 'status-page.png'), fullPage: true });
    expect(problems).toEqual([]);
  });

  it('fits a phone: neither the page nor a file table scrolls sideways', async () => {
    const page = await open({ width: 375, height: 740 });
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    // A table too wide for the screen would scroll inside its own focusable region; these three columns fit.
    const region = page.getByRole('region', { name: 'Files of release 9.0.0.0' });
    expect(await region.getAttribute('tabindex')).toBe('0');
    expect(await region.evaluate((el) => el.scrollWidth - el.clientWidth)).toBeLessThanOrEqual(0);
    // At 390 px the command lines wrap between their words, never inside a flag (--password-|file).
    await page.setViewportSize({ width: 390, height: 844 });
    const lines = await page
      .locator('pre code .word')
      .evaluateAll((words) => words.filter((w) => w.textContent!.startsWith('--')).map((w) => [w.textContent, w.getClientRects().length]));
    expect(lines.length).toBeGreaterThan(5);
    expect(lines.filter(([, rects]) => rects !== 1)).toEqual([]);
    await page.screenshot({ path: join(RESULTS, 'status-page-phone.png'), fullPage: true });
    expect(problems).toEqual([]);
  });

  it('marks a deleted binary as missing once the server looked again (SIGHUP)', async () => {
    await rm(join(root, 'PROD/COMP/VCENTER', VCENTER_ISO));
    serve.child.kill('SIGHUP');
    await serve.waitForStderr(/Reloaded/);
    const page = await open();
    expect(await page.locator('.verdict').textContent()).toMatch(/^✗ Incomplete: 15 of 16 files present; 1 missing\.$/);
    const row = page.getByRole('table', { name: 'Files of release 9.0.0.0' }).getByRole('row', { name: new RegExp(VCENTER_ISO.replace(/\./g, '\\.')) });
    expect(await row.textContent()).toContain('✗ missing');
    await page.screenshot({ path: join(RESULTS, 'status-page-missing.png'), fullPage: true });
    expect(problems).toEqual([]);
  });
});
