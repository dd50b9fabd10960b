// The lines of an installer's row, for each installer command.
import type { VcenterResync } from '../procedures/vcenters/session.js';
import { BUNDLE_DOWNLOAD_STATUS } from '../constants.js';
import type {
  ConsumerSync,
  DepotCaTrust,
  DepotPushResult,
  DownloadReport,
  EnsuredSync,
  InstallerStatus,
  ReleasesResult,
  SyncResult,
  TrustOutcome,
  UntrustOutcome,
} from '../installer/index.js';
import { formatBytes } from '../util/progress.js';
import { plural } from '../util/text.js';

export function trustLine(outcomes: TrustOutcome[]): string[] {
  return outcomes.map((o) => `${o.action === 'imported' ? 'imported' : 'already trusted'}: ${o.subject}${o.alias ? ` (alias ${o.alias})` : ''}`);
}

export function untrustLine(outcomes: UntrustOutcome[]): string[] {
  return outcomes.map((o) =>
    o.action === 'removed' ? `removed: ${o.subject} (alias ${o.aliases.join(', ')})` : `not trusted: ${o.subject} (nothing to remove)`,
  );
}

/** What a consumer lists after a sync: its release versions, or why they could not be read. */
interface Listed {
  releases?: string[];
  releasesError?: string;
}

export function depotLine(result: DepotPushResult & Listed & { trusted?: TrustOutcome[]; sync?: EnsuredSync }): string[] {
  const conf = result.settings.depotConfiguration;
  const where = conf?.url ?? `${conf?.hostname ?? '?'}:${conf?.port ?? '?'}`;
  const lines = [`depot ${where}: ${result.status ?? 'no status'}${result.action === 'unchanged' ? ' (already set, nothing sent)' : ''}`];
  if (!result.ok && result.message) lines.push(result.errorCode ? `${result.errorCode}: ${result.message}` : result.message);
  if (!result.ok && result.fix) lines.push(result.fix);
  if (result.trusted) lines.push(...trustLine(result.trusted));
  if (result.sync) lines.push(...syncLines(result.sync), ...listedLines(result));
  return lines;
}

function syncLines(sync: SyncResult & Partial<Pick<EnsuredSync, 'action' | 'reason' | 'previousSyncAt' | 'catalogNote'>>): string[] {
  const when = sync.completedAt ? ` (${sync.completedAt})` : '';
  const why =
    sync.action !== 'resynced'
      ? ''
      : sync.reason === 'catalog-changed'
        ? `: settings unchanged; the depot's catalog changed since the last sync at ${sync.previousSyncAt ?? '?'}: re-synced`
        : `: settings unchanged; re-synced, as the date of the depot's catalog is not known here${sync.catalogNote ? `: ${sync.catalogNote}` : ''}`;
  if (sync.ok) return [`sync: ${sync.status}${when}${sync.action === 'already-synced' ? ', already synced: nothing sent' : why}`];
  return [`sync: ${sync.status}${when}${why}: ${sync.message ?? 'no message'}`, ...(sync.fix ? [sync.fix] : [])];
}

function listedLines(listed: Listed): string[] {
  if (listed.releasesError) return [`releases: not listed: ${listed.releasesError}`];
  if (!listed.releases) return [];
  return [`releases: ${listed.releases.length > 0 ? listed.releases.join(', ') : 'none'}`];
}

/** `installer sync`: the verdict, its fix when it failed, the releases listed when it succeeded. */
export function syncResultLines(result: ConsumerSync): string[] {
  return [...syncLines(result), ...listedLines(result)];
}

/** `installer releases`: the versions on the row's line, then one line per release with its date. */
export function releasesLines(result: ReleasesResult): string[] {
  if (result.releases.length === 0) return ['releases: none'];
  return [
    `releases: ${result.releases.map((r) => r.version).join(', ')}`,
    ...result.releases.map((r) =>
      `${r.version.padEnd(12)} ${r.releaseDate ?? ''}${r.minInstallerVersion ? `  (needs installer ${r.minInstallerVersion} or later)` : ''}`.trimEnd(),
    ),
  ];
}

export function downloadLines(report: DownloadReport): string[] {
  const done = report.bundles.filter((b) => b.status === BUNDLE_DOWNLOAD_STATUS.success).length;
  const bytes = report.bundles.reduce((sum, b) => sum + b.size, 0);
  const lines = [`release ${report.release} (${report.imageType}): ${done} of ${plural(report.bundles.length, 'bundle')} downloaded, ${formatBytes(bytes)}`];
  for (const b of report.bundles) {
    const how = b.action === 'already-downloaded' ? ' (already downloaded)' : '';
    lines.push(`${b.status.padEnd(8)} ${b.component} ${b.name}${how}${b.status === BUNDLE_DOWNLOAD_STATUS.success ? '' : b.message ? `: ${b.message}` : ''}`);
  }
  return lines;
}

export function statusLines(s: InstallerStatus): string[] {
  const conf = s.depot.depotConfiguration;
  const account = s.depot.offlineAccount;
  // The role and version lead the row already: the depot comes first.
  const lines = [
    conf
      ? `depot: ${conf.url ?? `${conf.hostname}:${conf.port}`}${account?.username ? ` as ${account.username}` : ''}: ${account?.status ?? 'no status'}${account?.message ? ` (${account.message})` : ''}`
      : `depot: not configured${account?.status ? ` (${account.status})` : ''}`,
  ];
  if (s.sync)
    lines.push(
      `sync: ${s.sync.syncStatus}${s.sync.lastSyncCompletionTimestamp ? ` (${s.sync.lastSyncCompletionTimestamp})` : ''}${s.sync.errorMessage ? `: ${s.sync.errorMessage}` : ''}`,
    );
  if (s.downloads) {
    const counts = Object.entries(s.downloads.byStatus).map(([status, n]) => `${n} ${status}`);
    lines.push(`bundles: ${counts.length > 0 ? counts.join(', ') : 'none offered'}`);
    for (const f of s.downloads.failed) lines.push(`  FAILED ${f.component ?? f.bundleId}${f.message ? `: ${f.message}` : ''}`);
  }
  if (s.depotCa) lines.push(depotCaLine(s.depotCa));
  else if (s.depotCaUnknown) lines.push(`depot CA: not checked: ${s.depotCaUnknown}; pass --ca with the depot's CA to check it`);
  lines.push(`trusted certificates: ${s.trusted.length}`);
  for (const t of s.trusted) {
    lines.push(`  ${t.alias}${t.subject ? `: ${t.subject}, valid to ${t.notAfter} (${t.daysLeft} days)` : ''}`);
    if (t.subject) lines.push(`    issuer ${t.issuer}, SHA-256 ${t.sha256}`);
  }
  return lines;
}

function depotCaLine(ca: DepotCaTrust): string {
  const which = ca.source === 'given' ? "the depot's CA (given)" : `the CA of the depot ${ca.depot}`;
  if (!ca.present) return `depot CA: MISSING: ${which} is not among the trusted certificates`;
  const left = `${ca.daysLeft ?? '?'} days left`;
  return `depot CA: ${ca.flag === 'expiring' ? 'EXPIRING: ' : ''}${which} is trusted as ${ca.alias}, ${left}`;
}

/** A vCenter's row: its ESX depots synced again, and the components it then lists (or why the sync failed). */
export function vcenterResyncLines(result: VcenterResync): string[] {
  const components = result.components.map((c) => `${c.name} ${c.versions.join(', ')}`);
  const lines = [`ESX depots: sync ${result.sync.status}`];
  if (result.problem) lines.push(result.problem);
  if (result.fix) lines.push(result.fix);
  lines.push(`components: ${components.length > 0 ? components.join('; ') : 'none listed'}`);
  return lines;
}
