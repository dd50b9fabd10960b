import { formatBuildReport, formatVerifyResult } from '../../src/cli/depot.js';
import { describeError, forTheUser } from '../../src/cli/output.js';
import { formatMirrorReport } from '../../src/cli/transfer-mirror.js';
import { formatPackReport } from '../../src/cli/transfer-pack.js';
import { formatPruneReport } from '../../src/cli/transfer-prune.js';
import { formatUnpackReport } from '../../src/cli/transfer-unpack.js';
import type { BuildReport } from '../../src/depot/build.js';
import type { VerifyResult } from '../../src/depot/verify.js';
import { EXIT } from '../../src/util/errors.js';
import { type MirrorOptions, type MirrorReport, mirrorDepot } from '../../src/transfer/mirror.js';
import type { PruneReport } from '../../src/transfer/prune.js';
import { type PackOptions, type PackReport, packDepot } from '../../src/transfer/pack.js';
import { type UnpackOptions, type UnpackReport, unpackDepot } from '../../src/transfer/unpack.js';

/**
 * The transfer commands' library calls run in this process, with what the command line makes of them: the exit
 * code (0 when the report is ok, 1 when not, the error's own code when it throws), and the sentence and fix it
 * would print on stderr. The command line itself is left to each command's few smoke tests.
 */
export interface Outcome<T> {
  code: number;
  /** Undefined when the call threw (stderr says why). */
  report: T;
  /** The error's sentence and its fix, in the command line's words, as the CLI prints them; empty when it did not throw. */
  stderr: string;
}

export async function outcome<T extends object>(work: Promise<T>): Promise<Outcome<T>> {
  try {
    const report = await work;
    // A report without `ok` (prune's) is a success when it is made at all.
    return { code: (report as { ok?: boolean }).ok === false ? EXIT.problems : EXIT.ok, report, stderr: '' };
  } catch (err) {
    const { message, exitCode, fix } = describeError(err);
    return {
      code: exitCode,
      report: undefined as unknown as T,
      stderr: [message, fix]
        .filter(Boolean)
        .map((l) => forTheUser(l!))
        .join('\n'),
    };
  }
}

export type UnpackExtra = Omit<UnpackOptions, 'media' | 'out'>;

/** `depot unpack <media...> --out <out>`, in-process. */
export function unpackIn(media: string[], out: string, options: UnpackExtra = {}): Promise<Outcome<UnpackReport>> {
  return outcome(unpackDepot({ media, out, ...options }));
}

/** `depot pack <depot> --out <out>`, in-process; the volume size in bytes (the tests' 256K unless given). */
export function packIn(depot: string, out: string, options: Partial<PackOptions> = {}): Promise<Outcome<PackReport>> {
  return outcome(packDepot({ depot, out, volumeSize: 256 * 1024, ...options }));
}

/** The lines `depot unpack` prints without --json, as the user reads them. */
export const unpackText = (report: UnpackReport): string => formatUnpackReport(report).map(forTheUser).join('\n');

/** The lines `depot pack` prints without --json, as the user reads them. */
export const packText = (report: PackReport): string => formatPackReport(report).map(forTheUser).join('\n');

/** `depot mirror <url> --out <out>`, in-process. */
export function mirrorIn(url: string, out: string, options: Omit<MirrorOptions, 'url' | 'out'> = {}): Promise<Outcome<MirrorReport>> {
  return outcome(mirrorDepot({ url, out, ...options }));
}

/** The lines `depot mirror` prints without --json, as the user reads them. */
export const mirrorText = (report: MirrorReport): string => formatMirrorReport(report).map(forTheUser).join('\n');

/** The lines `depot build` prints without --json, as the user reads them. */
export const buildText = (report: BuildReport): string => formatBuildReport(report).map(forTheUser).join('\n');

/** The lines `depot verify` prints without --json, as the user reads them. */
export const verifyText = (result: VerifyResult): string => formatVerifyResult(result).map(forTheUser).join('\n');

/** The lines `depot prune` prints without --json, as the user reads them. */
export const pruneText = (report: PruneReport): string => formatPruneReport(report).map(forTheUser).join('\n');
