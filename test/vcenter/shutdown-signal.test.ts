import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';

// In a child process of its own: signals sent to the test worker would reach the runner's handlers too.
describe('waitForShutdownSignal', () => {
  it('resolves with the signal received and stops listening', async () => {
    const output = pathToFileURL(join(dirname(CLI), 'output.js')).href;
    const script = `import { waitForShutdownSignal } from ${JSON.stringify(output)};
const waiting = waitForShutdownSignal();
// Signal listeners keep no process alive; a served port does, in the commands.
const alive = setInterval(() => {}, 60_000);
process.stdout.write('ready\\n');
const signal = await waiting;
clearInterval(alive);
process.stdout.write(signal + ' ' + process.listenerCount('SIGINT') + ' ' + process.listenerCount('SIGTERM') + '\\n');`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        if (out.includes('ready\n')) resolve();
      });
      child.once('exit', () => reject(new Error(`exited early: ${err}`)));
    });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out).toBe('ready\nSIGTERM 0 0\n');
  });
});
