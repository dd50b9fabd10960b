import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './temp.js';

const run = promisify(execFile);
const PROBE = join(REPO_ROOT, 'test/interop/DepotProbe.java');

export const JAVA = await run('java', ['-version']).then(
  () => true,
  () => false,
);

/** One run of Java's TLS client, as the installer: trust only `trust` (a PEM file) and ask `url`. */
export interface JavaProbe {
  trust: string;
  url: string;
}

export interface JavaProbeOptions {
  /** Resolves the depot's host name to 127.0.0.1, as DNS would for the installer. */
  hostsFile: string;
  /** Where the probe is compiled, once: javac costs seconds, the source launcher paid them on every run. */
  classDir: string;
  user: string;
  password: string;
}

/**
 * Runs test/interop/DepotProbe.java, compiled once into `classDir`, in one JVM for all `probes`:
 * per probe, its output lines ("HEAD 200 <length>\nGET 200 <length>\n", or the TLS error).
 */
export async function javaProbes(options: JavaProbeOptions, probes: JavaProbe[]): Promise<string[]> {
  if (!existsSync(join(options.classDir, 'DepotProbe.class'))) await run('javac', ['-d', options.classDir, PROBE]);
  const args = probes.flatMap((p) => [p.trust, p.url]);
  const { stdout, stderr } = await run('java', [
    `-Djdk.net.hosts.file=${options.hostsFile}`,
    '-cp',
    options.classDir,
    'DepotProbe',
    options.user,
    options.password,
    ...args,
  ]).catch((err: { stdout: string; stderr: string }) => err);
  const outputs = stdout.split(/^--\n/m).slice(0, probes.length);
  // A JVM that died early leaves later probes without output: say why in each.
  return probes.map((_, i) => outputs[i] ?? stderr);
}
