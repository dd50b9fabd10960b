import { createHash } from 'node:crypto';
import { VCENTER_UPGRADE_METADATA_DIR } from '../constants.js';
import { formatBytes, plural } from '../util/text.js';
import { certificateDateProblem } from './served-certificate.js';
import { STATUS_PAGE_STYLE } from './status-style.js';
import type { StatusCertificate, StatusComponent, StatusData, StatusFile, StatusRelease } from './status-data.js';

/** Escapes text for HTML element content and double-quoted attribute values: catalogs may hold hostile names. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const DAY_MS = 86_400_000;

/** The status as served to a program (`Accept: application/json`): the data, with the ages that depend on `now`. */
export interface StatusReport extends StatusData {
  servedAt: string;
  hclAgeDays: number | null;
  certificateDaysLeft: number | null;
  caDaysLeft: number | null;
}

const daysBetween = (from: Date, to: Date) => Math.floor((to.getTime() - from.getTime()) / DAY_MS);

export function statusReport(data: StatusData, now = new Date()): StatusReport {
  return {
    ...data,
    servedAt: now.toISOString(),
    hclAgeDays: data.hcl.updated ? daysBetween(new Date(data.hcl.updated), now) : null,
    certificateDaysLeft: data.certificate ? daysBetween(now, new Date(data.certificate.notAfter)) : null,
    caDaysLeft: data.ca.certificate ? daysBetween(now, new Date(data.ca.certificate.notAfter)) : null,
  };
}

/**
 * Whether a request's Accept header prefers JSON to HTML (by quality; a tie, `*\/*` or no header is HTML,
 * what a browser gets). Parameters other than q are ignored.
 */
export function prefersJson(accept: string | undefined): boolean {
  if (!accept) return false;
  const quality = (type: string, sub: string): number => {
    let best = -1;
    let q = 0;
    for (const part of accept.split(',')) {
      const [range, ...params] = part.trim().toLowerCase().split(';');
      const [t, s] = (range ?? '').trim().split('/');
      const specificity = t === type && s === sub ? 2 : t === type && s === '*' ? 1 : t === '*' && s === '*' ? 0 : -1;
      if (specificity < best || specificity === -1) continue;
      const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      const value = qParam ? Number(qParam.slice(2)) : 1;
      best = specificity;
      q = Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
    }
    return q;
  };
  return quality('application', 'json') > quality('text', 'html');
}

/** The style sheet's hash, which the Content-Security-Policy allows and nothing else: no script, no other source. */
const STYLE_HASH = createHash('sha256').update(STATUS_PAGE_STYLE).digest('base64');
export const STATUS_PAGE_CSP = `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

const e = escapeHtml;
const minute = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

function fileState(f: StatusFile): string {
  switch (f.state) {
    case 'present':
      return f.hashVerified ? '<span class="ok">✓ present, content verified</span>' : '<span class="ok">✓ present</span>';
    case 'missing':
      return '<span class="bad">✗ missing</span>';
    case 'wrong-size':
      return `<span class="bad">✗ wrong size: ${e(formatBytes(f.actualSize ?? 0))} on disk</span>`;
    case 'unreadable':
      return '<span class="bad">✗ cannot be read by the server</span>';
    case 'left-out':
      return '<span class="muted">left out by the selection</span>';
  }
}

/**
 * One table of components and their files: three columns (file, size, status) that fit a phone, and a
 * group of rows per component headed by its name and version (`th scope="rowgroup"`). `id` ties the caption
 * to its scrolling region.
 */
function filesTable(id: string, caption: string, components: StatusComponent[]): string {
  const groups = components.map((c) => {
    const head = `<tr><th scope="rowgroup" colspan="3" class="group">${e(c.name)} <span class="version">${e(c.version)}</span></th></tr>`;
    const rows =
      !c.inCatalog || c.files.length === 0
        ? [
            `<tr><th scope="row"><span class="muted">${c.inCatalog ? 'no file' : 'not in the catalog'}</span></th><td class="num">–</td><td class="muted">nothing to fetch</td></tr>`,
          ]
        : c.files.map((f) => `<tr><th scope="row">${e(f.name)}</th><td class="num">${e(formatBytes(f.size))}</td><td>${fileState(f)}</td></tr>`);
    return `<tbody>\n${head}\n${rows.join('\n')}\n</tbody>`;
  });
  return `<div class="scroll" role="region" aria-labelledby="${id}" tabindex="0">
<table>
<caption id="${id}">${e(caption)}</caption>
<thead><tr><th scope="col">File</th><th scope="col">Size</th><th scope="col">Status</th></tr></thead>
${groups.join('\n')}
</table>
</div>`;
}

/** `cut`: another release holds binaries, so a release with none of its own is left out on purpose, not a fault. */
function releaseSection(r: StatusRelease, index: number, cut: boolean): string {
  const files = r.components.flatMap((c) => c.files);
  const missing = files.filter((f) => f.state !== 'present' && f.state !== 'left-out').length;
  const facts = [
    r.releaseDate ? `released ${e(r.releaseDate)}` : undefined,
    r.minInstallerVersion ? `needs installer ${e(r.minInstallerVersion)} or later` : undefined,
    `${plural(r.components.length, 'component')}, ${plural(files.length, 'file')}`,
  ].filter((x): x is string => x !== undefined);
  const verdict = r.complete
    ? '<span class="ok">✓ complete</span>'
    : r.state === 'complete-as-chosen'
      ? '<span class="ok">✓ complete as chosen</span>'
      : files.length === 0
        ? '<span class="bad">✗ no file of it is in the catalog</span>'
        : r.state === 'metadata-only'
          ? `<span class="${cut || r.counts.leftOut ? 'muted' : 'bad'}">${cut || r.counts.leftOut ? '' : '✗ '}metadata only: its own binaries are not in this depot</span>`
          : r.state === 'wrong-binaries'
            ? `<span class="bad">✗ ${plural(r.counts.wrongBytes, 'file')} with other bytes than it lists${missing > r.counts.wrongBytes ? `, ${missing - r.counts.wrongBytes} missing` : ''}</span>`
            : `<span class="bad">✗ ${plural(missing, 'file')} missing or wrong</span>`;
  const problems = r.state === 'wrong-binaries' ? r.problems.filter((p) => p.otherBuild).map((p) => `<p class="bad">${e(p.message)}</p>`) : [];
  // What the depot's selection left out of it, in the words verify and check print.
  if (r.counts.leftOut) problems.push(`<p class="muted">${e(r.message)}</p>`);
  return `<section aria-labelledby="release-${index}">
<h3 id="release-${index}">Release ${e(r.version)}</h3>
<p>${verdict}; ${facts.join('; ')}.</p>
${problems.join('\n')}${problems.length ? '\n' : ''}${filesTable(`release-${index}-files`, `Files of release ${r.version}`, r.components)}
</section>`;
}

function certificateList(c: StatusCertificate, now: Date, role: 'server' | 'ca'): string {
  const left = daysBetween(now, new Date(c.notAfter));
  const expiry =
    left < 0
      ? `<span class="bad">expired ${plural(-left, 'day')} ago</span>`
      : left <= 30
        ? `<span class="warn">${plural(left, 'day')} left</span>`
        : `${plural(left, 'day')} left`;
  const names = [...c.dns.map((d) => `DNS:${d}`), ...c.ips.map((ip) => `IP:${ip}`)];
  // The installer checks the host name against the server certificate's SAN; a CA's names do not matter.
  const san =
    role === 'ca'
      ? ''
      : `<dt>Names (SAN)</dt><dd>${names.length > 0 ? e(names.join(', ')) : '<span class="bad">none: the installer refuses a certificate without a SAN</span>'}</dd>\n`;
  return `<dl>
<dt>Subject</dt><dd>${e(c.subject || '(empty)')}</dd>
${san}
<dt>Issuer</dt><dd>${e(c.issuer)}</dd>
<dt>Valid until</dt><dd>${e(minute(c.notAfter))} (${expiry})</dd>
<dt>SHA-256 fingerprint</dt><dd><code>${e(c.sha256)}</code></dd>
</dl>`;
}

export interface RenderOptions {
  /** The time ages are computed against; default now. */
  now?: Date;
  /** A copy written once (`depotkit export`), not a page a server answers with what it sees now. */
  snapshot?: boolean;
}

/**
 * The status page: plain HTML and CSS, nothing external, no script; every string from the depot, the
 * certificate or the options is escaped. `depotkit serve` answers it at `/`; `depotkit export` may write it
 * as a static index.html (then the data's `access.caPath` says where the CA certificate is, or null).
 */
export function renderStatusPage(data: StatusData, options: RenderOptions = {}): string {
  const now = options.now ?? new Date();
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Offline depot – ${e(data.access.url)}</title>
<link rel="icon" href="data:,">
<style>${STATUS_PAGE_STYLE}</style>
</head>
<body>
<header>
<h1>Offline depot</h1>
${verdictLine(data)}
${certificateBanner(data, now)}
</header>
<main>
${useSection(data)}
${releasesSection(data)}
${otherSection(data)}
${hclSection(data, now)}
${upgradesSection(data)}
${esxSection(data)}
${certificateSection(data, now)}
</main>
${footer(data, options.snapshot ?? false)}
</body>
</html>
`;
}

/** The page's first words: whether the installer can use the depot, and if not why. */
function verdictLine(data: StatusData): string {
  const s = data.summary;
  if (data.catalog.state !== 'ok') {
    return `<p class="verdict bad">✗ The installer cannot use this depot: ${e(data.catalog.message ?? 'the catalog cannot be read.')}</p>`;
  }
  if (s.complete && s.leftOut > 0) {
    return `<p class="verdict ok">✓ Complete as chosen: ${s.present === 1 ? 'the file' : `all ${s.present} files`} chosen by the selection this depot records (${e(data.selection ?? '')}) ${s.present === 1 ? 'is' : 'are'} present with the right size (${e(formatBytes(s.presentBytes))}); ${s.leftOut} left out by it.</p>`;
  }
  if (s.complete) {
    return `<p class="verdict ok">✓ Complete: all ${plural(s.files, 'file')} the catalog names are present with the right size (${e(formatBytes(s.bytes))}).</p>`;
  }
  const problems = [
    s.missing && `${s.missing} missing`,
    s.wrongSize && `${s.wrongSize} with the wrong size`,
    s.unreadable && `${s.unreadable} unreadable`,
    s.leftOut && `${s.leftOut} left out by the selection this depot records (${data.selection ?? ''})`,
  ]
    .filter(Boolean)
    .join(', ');
  return `<p class="verdict bad">✗ Incomplete: ${s.files === 0 ? 'the catalog names no file' : `${s.present} of ${plural(s.files, 'file')} present; ${e(problems)}`}.</p>`;
}

/** What to give the installer: the URL, the user, the CA certificate, the open paths and the two command lines. */
function useSection(data: StatusData): string {
  const a = data.access;
  const user =
    a.auth === 'none'
      ? 'none: the depot is open to anyone who reaches it'
      : a.user !== undefined
        ? `<code>${e(a.user)}</code> (the password is not shown here)`
        : "a user of the server's htpasswd file (the password is not shown here)";
  const caLine = data.ca.certificate
    ? `${a.caPath ? `<a href="${e(a.caPath)}" download="depot-ca.pem">Download the CA certificate</a> (save it as <code>depot-ca.pem</code>); ` : ''}${e(data.ca.certificate.subject)}, SHA-256 <code>${e(data.ca.certificate.sha256)}</code>`
    : `<span class="warn">not known to this server</span>: ${e(data.ca.unknownReason ?? '')}`;
  const open = a.openPrefixes.length > 0 ? `<dt>Open without credentials</dt><dd>${a.openPrefixes.map((p) => `<code>/${e(p)}/</code>`).join(', ')}</dd>` : '';
  return `<section aria-labelledby="use">
<h2 id="use">Give this to the installer</h2>
<dl>
<dt>Depot URL</dt><dd><code>${e(a.url)}</code></dd>
<dt>User</dt><dd>${user}</dd>
<dt>CA certificate</dt><dd>${caLine}</dd>
${open}</dl>
<h3>Check the depot as the installer will</h3>
<p>${checkPreamble(a.auth !== 'none', Boolean(data.ca.certificate))}</p>
<pre><code>${shellWords(a.commands.check)}</code></pre>
<h3>Point the installer at it</h3>
<p>${a.tls ? "Imports the CA certificate into the installer's trust store, sets" : 'Sets'} the depot and waits for the installer to accept it:</p>
<pre><code>${shellWords(a.commands.installerDepot)}</code></pre>
</section>`;
}

/** A command line whose words a narrow screen wraps between, never inside (a flag broken at its hyphen reads as two). */
function shellWords(line: string): string {
  return line
    .split(' ')
    .map((w) => `<span class="word">${e(w)}</span>`)
    .join(' ');
}

/** What the reader saves before running the check line: the password only when the depot has users, the CA only when it is known. */
function checkPreamble(hasUsers: boolean, caKnown: boolean): string {
  const saves = [
    ...(hasUsers ? ["the depot user's password on the first line of <code>depot.pass</code>"] : []),
    ...(caKnown ? ['the CA certificate in <code>depot-ca.pem</code>'] : []),
  ];
  return saves.length > 0 ? `Put ${saves.join(' and ')}, then:` : 'Run:';
}

function releasesSection(data: StatusData): string {
  const cut = data.releases.some((r) => r.state !== 'metadata-only' && r.counts.present > 0);
  const releases = data.releases.length > 0 ? data.releases.map((r, i) => releaseSection(r, i, cut)).join('\n') : '<p>The catalog names no release.</p>';
  const grouping =
    data.grouping === 'manifest'
      ? 'Releases as the manifest lists them, with the files the catalog names for each component version.'
      : `Releases from the catalog's product versions${data.manifest.state === 'ok' ? '' : ` (the manifest cannot be used: ${e(data.manifest.message ?? data.manifest.state)})`}.`;
  return `<section aria-labelledby="releases">
<h2 id="releases">Releases</h2>
<p>${grouping}</p>
${releases}
</section>`;
}

/** The component versions no release names; nothing (an empty line) when there are none. */
function otherSection(data: StatusData): string {
  if (data.otherComponents.length === 0) return '';
  return `<section aria-labelledby="other">
<h2 id="other">Other versions in the catalog</h2>
<p>Component versions the catalog offers that no release of the manifest names.</p>
${filesTable('other-files', 'Other component versions', data.otherComponents)}
</section>`;
}

function hclSection(data: StatusData, now: Date): string {
  let hcl: string;
  if (data.hcl.updated) {
    const age = daysBetween(new Date(data.hcl.updated), now);
    const stale = age > data.hcl.maxAgeDays;
    hcl = `<p class="${stale ? 'bad' : 'ok'}">${stale ? '✗' : '✓'} Updated ${e(minute(data.hcl.updated))}: ${plural(age, 'day')} old${stale ? `, more than ${data.hcl.maxAgeDays}: the installer reports it as out of date. Download a current all.json and lastupdatedtime.json.` : '.'}</p>`;
  } else {
    hcl = `<p class="bad">✗ The vSAN HCL's update time is ${data.hcl.state === 'missing' ? 'missing' : 'unreadable'} (PROD/vsan/hcl/lastupdatedtime.json).</p>`;
  }
  return `<section aria-labelledby="hcl">
<h2 id="hcl">vSAN hardware compatibility list</h2>
${hcl}
</section>`;
}

function upgradesSection(data: StatusData): string {
  // Not named by the catalog, so listed here (and in the JSON, where depot mirror reads it).
  const upgradeFolders = new Set(data.upgradeMetadata.map((p) => p.split('/').at(-2)));
  const upgrades =
    data.upgradeMetadata.length > 0
      ? `<p>${plural(data.upgradeMetadata.length, 'file')} in ${plural(upgradeFolders.size, 'upgrade folder')} under <code>${e(VCENTER_UPGRADE_METADATA_DIR)}/</code>.</p>`
      : `<p class="muted">None under <code>${e(VCENTER_UPGRADE_METADATA_DIR)}/</code> (the vendor's metadata archive carries it; <code>depotkit depot build</code> lays it out).</p>`;
  return `<section aria-labelledby="upgrades">
<h2 id="upgrades">vCenter upgrade metadata</h2>
${upgrades}
</section>`;
}

/** The ESX depots vSphere Lifecycle Manager patches hosts from, served beside PROD/: each product and what it holds. */
function esxSection(data: StatusData): string {
  if (data.esx.length === 0) return '';
  const depots = data.esx.map((d) => {
    const products = d.products
      .map((p) => `<li class="${p.state === 'complete' ? 'ok' : 'bad'}">${e(p.productId)} ${e(p.version)}: ${e(p.words)}</li>`)
      .join('\n');
    const problems = d.problems.map((p) => `<li class="bad">${e(p)}</li>`).join('\n');
    return `<h3>${d.ok ? '✓' : '✗'} <code>${e(d.index)}</code> <span class="muted">(${d.kind === 'umds' ? 'UMDS patch store' : 'online depot: give vLCM the URL of this file'})</span></h3>
<p>${d.present} of ${plural(d.vibs, 'VIB')} present with the size their metadata states.</p>
<ul>${products}${problems}</ul>`;
  });
  return `<section aria-labelledby="esx">
<h2 id="esx">ESXi depots for vSphere Lifecycle Manager</h2>
${depots.join('\n')}
<p class="muted">Judged by size, as the rest of this page; <code>depotkit esx verify</code> also hashes every VIB when asked.</p>
</section>`;
}

/** The served certificate's dates when the installer refuses it, or soon will: at the top, not only in its section. */
function certificateBanner(data: StatusData, now: Date): string {
  const problem = data.certificate ? certificateDateProblem(data.certificate, now) : undefined;
  const dates = problem
    ? `<p class="verdict ${problem.severity === 'error' ? 'bad' : 'warn'}">${problem.severity === 'error' ? '✗' : '!'} ${e(problem.message)} <a href="#cert">Server certificate</a></p>`
    : '';
  // Anyone who can read the key can impersonate the depot: said as loudly as a certificate about to expire.
  const key = data.keyExposed ? `<p class="verdict warn">! The served certificate's private key: ${e(data.keyExposed)}</p>` : '';
  return dates + key;
}

function certificateSection(data: StatusData, now: Date): string {
  const certificate = data.certificate
    ? certificateList(data.certificate, now, 'server')
    : data.access.tls
      ? '<p class="warn">The served certificate cannot be read.</p>'
      : '<p>Served over plain HTTP: no certificate (the installer accepts HTTP through its API from 9.1).</p>';
  const ca = data.ca.certificate ? `<h3>Its CA</h3>\n${certificateList(data.ca.certificate, now, 'ca')}` : '';
  return `<section aria-labelledby="cert">
<h2 id="cert">Server certificate</h2>
${certificate}
${ca}
</section>`;
}

function footer(data: StatusData, snapshot: boolean): string {
  const s = data.summary;
  const hashed =
    s.hashVerified > 0
      ? ` ${plural(s.hashVerified, 'file')} ${s.hashVerified === 1 ? 'was' : 'were'} hashed against the catalog when placed and are unchanged since.`
      : '';
  return `<footer class="muted">
<p>Files checked ${e(minute(data.checkedAt))} by their size against the catalog, without reading them.${hashed} Only what the catalog names is listed. ${snapshot ? 'A copy written by depotkit export: it shows the depot as it was then.' : 'Served by depotkit serve; the same data as JSON with <code>Accept: application/json</code>.'}</p>
</footer>`;
}
