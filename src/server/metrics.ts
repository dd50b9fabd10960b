import { SERVE_METRIC_NAMES } from '../constants.js';
import { certificateGauge } from './metrics-certificates.js';

/**
 * One metric of one serving process, in the JSON shape of prom-client's `Registry.getMetricsAsJSON()`, which
 * its `AggregatorRegistry.aggregate()` sums and renders; it crosses the IPC channel between serving processes.
 */
export interface MetricJson {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  /** How the processes' values of one series combine: counts add up; a date every process holds alike does not. */
  aggregator: 'sum' | 'max';
  values: { value: number; labels: Record<string, string> }[];
}
export type MetricsSnapshot = MetricJson[];

/** Why a request's credentials did not let it in; a label of the failures counter. */
export type AuthFailureReason = 'missing' | 'rejected' | 'rate_limited' | 'busy';
const AUTH_FAILURE_REASONS: readonly AuthFailureReason[] = ['missing', 'rejected', 'rate_limited', 'busy'];

/**
 * A method label: the two served methods by name, anything else as `other`, so that a client sending
 * made-up methods cannot grow the number of series without bound.
 */
function methodLabel(method: string | undefined): string {
  return method === 'GET' || method === 'HEAD' ? method : 'other';
}

/** An OpenSSL or system error code of a failed handshake as a label, or `other`: the set of such codes is finite. */
function tlsReasonLabel(err: NodeJS.ErrnoException): string {
  const code = err.code ?? '';
  return /^(ERR_SSL_[A-Z0-9_]{1,80}|E[A-Z]{2,20})$/.test(code) ? code : 'other';
}

const add = (map: Map<string, number>, key: string, n = 1) => map.set(key, (map.get(key) ?? 0) + n);

/**
 * The counts of one serving process, as plain numbers: the request and download paths only add to a
 * number (the download loop once per 256 KiB buffer it hands to the connection). prom-client is loaded
 * only by the process that answers a scrape (the primary: workers send it their snapshot), to sum every
 * process's snapshot and write the Prometheus text; a server nobody scrapes never loads it.
 */
export class ServeMetrics {
  /** `method status` -> requests answered. */
  private readonly requests = new Map<string, number>();
  private fileBytes = 0;
  private inFlight = 0;
  private slowReads = 0;
  private readonly authFailures = new Map<string, number>(AUTH_FAILURE_REASONS.map((r) => [r, 0]));
  private readonly tlsFailures = new Map<string, number>();
  private readonly certificates: ReturnType<typeof certificateGauge>;

  /** `servedCertificate`: the certificate (chain) this process serves now, replaced on reload. */
  constructor(servedCertificate: () => string | undefined = () => undefined) {
    this.certificates = certificateGauge(servedCertificate);
  }

  request(method: string | undefined, status: number): void {
    add(this.requests, `${methodLabel(method)} ${status}`);
  }

  fileBytesSent(n: number): void {
    this.fileBytes += n;
  }

  slowFileRead(): void {
    this.slowReads++;
  }

  downloadStarted(): void {
    this.inFlight++;
  }

  downloadEnded(): void {
    this.inFlight--;
  }

  authFailure(reason: AuthFailureReason): void {
    add(this.authFailures, reason);
  }

  tlsFailure(err: NodeJS.ErrnoException): void {
    add(this.tlsFailures, tlsReasonLabel(err));
  }

  /** This process's values, to be summed with the other processes' (aggregateMetrics). */
  snapshot(): MetricsSnapshot {
    const metric = (
      name: string,
      help: string,
      type: MetricJson['type'],
      values: MetricJson['values'],
      aggregator: MetricJson['aggregator'] = 'sum',
    ): MetricJson => ({
      name,
      help,
      type,
      aggregator,
      values,
    });
    return [
      metric(
        SERVE_METRIC_NAMES.requests,
        'Requests answered, by method (GET, HEAD, other) and status code.',
        'counter',
        [...this.requests].map(([key, value]) => {
          const [method, status] = key.split(' ') as [string, string];
          return { value, labels: { method, status } };
        }),
      ),
      metric(SERVE_METRIC_NAMES.fileBytes, 'Bytes of depot files handed to clients in response bodies.', 'counter', [{ value: this.fileBytes, labels: {} }]),
      metric(
        SERVE_METRIC_NAMES.slowFileReads,
        'File reads in the event loop that took long while the process slept (the disk, not the page cache); two close together send the reads to the thread pool for a while.',
        'counter',
        [{ value: this.slowReads, labels: {} }],
      ),
      metric(SERVE_METRIC_NAMES.downloadsInFlight, 'Downloads of depot files whose body is being sent.', 'gauge', [{ value: this.inFlight, labels: {} }]),
      metric(
        SERVE_METRIC_NAMES.authFailures,
        'Requests refused for their credentials: missing (the 401 challenge), rejected (wrong user or password), rate_limited (429), busy (503).',
        'counter',
        [...this.authFailures].map(([reason, value]) => ({ value, labels: { reason } })),
      ),
      metric(
        SERVE_METRIC_NAMES.tlsHandshakeFailures,
        'TLS handshakes that failed, by error code (a client that does not trust the certificate sends an alert such as ERR_SSL_TLSV1_ALERT_UNKNOWN_CA).',
        'counter',
        [...this.tlsFailures].map(([reason, value]) => ({ value, labels: { reason } })),
      ),
      metric(SERVE_METRIC_NAMES.processes, 'Serving processes whose counts are in this scrape.', 'gauge', [{ value: 1, labels: {} }]),
      metric(SERVE_METRIC_NAMES.residentMemory, 'Resident memory of the serving processes, summed.', 'gauge', [
        { value: process.memoryUsage.rss(), labels: {} },
      ]),
      // Every process serves the same certificate once a reload has reached it: the same value, not one to add up.
      metric(
        SERVE_METRIC_NAMES.certificateNotAfter,
        'When the served certificate (role="server") and its CA (role="ca") expire, in Unix seconds.',
        'gauge',
        this.certificates(),
        'max',
      ),
    ];
  }
}

/** The Prometheus text of several processes' snapshots, summed series by series by prom-client's aggregation (without its cluster module). */
export async function aggregateMetrics(snapshots: MetricsSnapshot[]): Promise<string> {
  const { AggregatorRegistry } = await import('prom-client');
  // The runtime shape of getMetricsAsJSON(); prom-client's declarations type `type` as an enum it does not use.
  return AggregatorRegistry.aggregate(snapshots as unknown as Parameters<typeof AggregatorRegistry.aggregate>[0]).metrics();
}
