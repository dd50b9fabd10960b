import { spawn } from 'node:child_process';

// Spawns node itself only (no built CLI, no peer): test/tiers.ts lets the quick tier import this module.

/** A pid that was a process of this machine a moment ago and has ended. */
export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.on('close', resolve));
  return child.pid!;
}
