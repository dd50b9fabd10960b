import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './temp.js';

const PROBE = join(REPO_ROOT, 'test/interop/DepotProbe.java');

export const JAVA = await promisify(execFile)('java', ['-version']).then(
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
  user: string;
  password: string;
}

export interface JavaProbes {
  /** The probe's output lines ("HEAD 200 <length>\nGET 200 <length>\n", or the TLS error); one probe at a time. */
  probe(p: JavaProbe): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Starts test/interop/DepotProbe.java in one JVM that probes each pair it is sent: the JVM's start-up and the
 * source launcher's compilation (seconds) are paid once per test file, not once per probe.
 */
export function startJavaProbes(options: JavaProbeOptions): JavaProbes {
  const child = spawn('java', [`-Djdk.net.hosts.file=${options.hostsFile}`, PROBE, options.user, options.password], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let waiting: { resolve: (text: string) => void; reject: (e: Error) => void } | undefined;
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const answer = () => {
    const end = out.indexOf('--\n');
    if (end < 0 || !waiting) return;
    const text = out.slice(0, end);
    out = out.slice(end + 3);
    waiting.resolve(text);
    waiting = undefined;
  };
  child.stdout.setEncoding('utf8').on('data', (d: string) => ((out += d), answer()));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  void exited.then(() => waiting?.reject(new Error(`Java's probe ended: ${out}${err}`)));
  let queue = Promise.resolve();
  return {
    probe(p) {
      const result = queue.then(
        () =>
          new Promise<string>((resolve, reject) => {
            if (child.exitCode !== null || child.signalCode !== null) return reject(new Error(`Java's probe ended: ${out}${err}`));
            waiting = { resolve, reject };
            child.stdin.write(`${p.trust}\t${p.url}\n`);
          }),
      );
      queue = result.then(
        () => undefined,
        () => undefined,
      );
      return result;
    },
    async stop() {
      child.stdin.end();
      await exited;
    },
  };
}
