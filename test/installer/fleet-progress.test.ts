import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { HAS_SCRIPT, onTerminal } from '../helpers/terminal.js';
import { closedPort } from '../helpers/ports.js';

/** Ports nothing listens on: each one was just free. */
async function closedPorts(n: number): Promise<number[]> {
  const ports: number[] = [];
  for (let i = 0; i < n; i++) ports.push(await closedPort());
  return ports;
}

describe('installer status over an inventory: the count line', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let args: string[];
  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir('depotkit-fleet-progress-'));
    const ports = await closedPorts(3);
    await writeFile(join(dir, 'password'), 'Fleet-Progress-1!\n', { mode: 0o600 });
    await writeFile(
      join(dir, 'fleet.yaml'),
      [
        'defaults: { passwordFile: password, insecure: true }',
        'consumers:',
        ...ports.map((p, i) => `  - { name: gone-${i}, url: "https://127.0.0.1:${p}" }`),
      ].join('\n'),
    );
    args = ['installer', 'status', '--inventory', join(dir, 'fleet.yaml')];
  });
  afterAll(() => cleanup());

  it.skipIf(!HAS_SCRIPT)('shows done, failed and left on a terminal, and not with --json', async () => {
    const shown = await onTerminal(args);
    expect(shown).toContain('consumers: 0 done, 0 failed, 3 left (of 3)');
    expect(shown).toContain('consumers: 0 done, 3 failed, 0 left (of 3)');
    expect(shown).toContain('3 consumers: 0 ok, 3 failed.');
    expect(await onTerminal([...args, '--json'])).not.toContain('left (of');
  });

  it('writes no count line where stderr is not a terminal', async () => {
    const { code, stdout, stderr } = await runCli(args);
    expect(code).toBe(1);
    expect(stderr).not.toContain('left (of');
    expect(stdout).toContain('the connection was refused (ECONNREFUSED)');
  });
});
