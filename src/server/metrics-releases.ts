import { SERVE_METRIC_NAMES } from '../constants.js';
import type { ReleaseState } from '../depot/release-status.js';
import type { MetricJson } from './metrics.js';
import type { StatusData } from './status-data.js';

/** Every state a release can be in, each a series of the state gauge (1 for the one it is in), so that an alert can match on it. */
const STATES: readonly ReleaseState[] = ['complete', 'complete-as-chosen', 'metadata-only', 'binaries-missing', 'wrong-binaries'];

/**
 * What each release holds, from the last look at the depot (the status page's): its binaries by state, a binary the
 * depot's recorded selection left out counted as `left_out`, not `missing`; and its verdict as a state set. Nothing
 * before the first look. The same in every process: a scrape takes them from the process that answers it.
 */
export function releaseMetrics(data: StatusData | undefined): MetricJson[] {
  const releases = data?.releases ?? [];
  const gauge = (name: string, help: string, values: MetricJson['values']): MetricJson => ({ name, help, type: 'gauge', aggregator: 'max', values });
  return [
    gauge(
      SERVE_METRIC_NAMES.releaseBinaries,
      "Binaries of each release by state: present, missing, wrong_bytes, unreadable, and left_out (not chosen by the depot's recorded selection: not a fault).",
      releases.flatMap((r) =>
        (
          [
            ['present', r.counts.present],
            ['missing', r.counts.missing],
            ['wrong_bytes', r.counts.wrongBytes],
            ['unreadable', r.counts.unreadable],
            ['left_out', r.counts.leftOut],
          ] as const
        ).map(([state, value]) => ({ value, labels: { release: r.version, state } })),
      ),
    ),
    gauge(
      SERVE_METRIC_NAMES.releaseState,
      'The verdict on each release, as depot verify and check give it: 1 for the state it is in (complete, complete-as-chosen, metadata-only, binaries-missing, wrong-binaries).',
      releases.flatMap((r) => STATES.map((state) => ({ value: r.state === state ? 1 : 0, labels: { release: r.version, state } }))),
    ),
  ];
}
