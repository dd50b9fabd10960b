import { SERVE_METRIC_NAMES } from '../constants.js';
import type { MetricJson } from './metrics.js';
import type { StatusData } from './status-data.js';

/**
 * The VIBs of each product of each ESX depot under the root, present and missing, from the last look at the
 * depot (the status page's): what an alert on a patch depot gone incomplete matches on.
 */
export function esxMetrics(data: StatusData | undefined): MetricJson[] {
  const depots = data?.esx ?? [];
  return [
    {
      name: SERVE_METRIC_NAMES.esxVibs,
      help: 'VIBs of each product and version of each ESX depot (vSphere Lifecycle Manager), by state: present (at the size its metadata states) or missing.',
      type: 'gauge',
      aggregator: 'max',
      values: depots.flatMap((d) =>
        d.products.flatMap((p) =>
          (
            [
              ['present', p.present],
              ['missing', p.vibs - p.present],
            ] as const
          ).map(([state, value]) => ({ value, labels: { depot: d.folder || '.', product: p.productId, version: p.version, state } })),
        ),
      ),
    },
  ];
}
