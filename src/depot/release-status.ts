import type { ReleaseBinary, ReleasePlan, ReleasePlans } from './release-plan.js';
import type { DepotSelection } from './selection.js';

// What each release of a depot holds, judged the same way by `depot verify` (files on disk), `check` (answers over
// HTTP) and the status page (sizes on disk): each reader says what it saw of each file, this says what it means.

/** What a reader saw at a binary's path. */
export type SeenFile =
  | { state: 'present' }
  | { state: 'missing' }
  | { state: 'unreadable' }
  /** There with another size (`actualSize` when the reader learnt it). */
  | { state: 'wrong-size'; actualSize?: number }
  /** There with the right size and other bytes. */
  | { state: 'wrong-content'; actualSha256: string };

/**
 * `complete`: every binary there with its bytes. `complete-as-chosen`: every binary the depot's recorded selection
 * chose of it is there with its bytes, and the others were left out by that selection. `metadata-only`: none of
 * the binaries only this release lists is here (a depot cut to other releases, or left out by the selection).
 * `binaries-missing`: some of its binaries are there, others missing or not readable (the installer fails their
 * download). `wrong-binaries`: a file under one of its names has other bytes.
 */
export type ReleaseState = 'complete' | 'complete-as-chosen' | 'metadata-only' | 'binaries-missing' | 'wrong-binaries';

/** A binary of a release that the depot's recorded selection did not choose, and that is not here. */
export interface LeftOutFile {
  path: string;
  component: string;
  productVersion: string;
}

/** Another catalog entry whose bytes a file holds: by SHA-256 when the file was hashed, else by a size no other entry has. */
export interface OtherBuild {
  path: string;
  fileName: string;
  component: string;
  productVersion: string;
  by: 'sha256' | 'size';
}

export interface ReleaseFileProblem {
  path: string;
  component: string;
  productVersion: string;
  /** `other-build`: the bytes are another catalog entry's; `wrong-bytes`: they match no entry. */
  problem: 'missing' | 'unreadable' | 'other-build' | 'wrong-bytes';
  /** What the release lists. */
  expected: { size: number; sha256: string };
  /** What was found, as far as the reader learnt it. */
  actual?: { size?: number; sha256?: string };
  otherBuild?: OtherBuild;
  message: string;
}

export interface ReleaseVerdict {
  version: string;
  state: ReleaseState;
  /** `leftOut`: binaries the depot's recorded selection did not choose that are not here (not counted missing). */
  counts: { binaries: number; present: number; missing: number; wrongBytes: number; unreadable: number; leftOut: number };
  /** Bytes its binaries take, and of those the bytes there with the right size. */
  bytes: { total: number; present: number };
  /** The files of the release with a problem, by path. */
  files: ReleaseFileProblem[];
  /** Its binaries the depot's recorded selection left out, by path. */
  leftOut: LeftOutFile[];
  message: string;
}

export interface ReleaseJudgement {
  grouping: ReleasePlans['grouping'];
  releases: ReleaseVerdict[];
  /** Some release is metadata only while another, not metadata only, holds binaries: a depot cut to some releases. */
  cut: boolean;
  /** Paths of binaries that only metadata-only releases (or, in a cut depot, no release) list, or that the recorded selection did not choose: absent on purpose. */
  leftOut: Set<string>;
  /** The selection the depot records, in words, when it records one. */
  selection?: string;
}

/** Finds the catalog entry whose bytes a file holds. */
function otherBuildFinder(catalog: ReleaseBinary[]): (path: string, seen: SeenFile) => OtherBuild | undefined {
  const byChecksum = new Map(catalog.map((b) => [b.checksum, b]));
  const bySize = new Map<number, ReleaseBinary[]>();
  for (const b of catalog) {
    let list = bySize.get(b.size);
    // Appended in place: demo and test depots give every binary one size, and a copy per binary is quadratic.
    if (!list) bySize.set(b.size, (list = []));
    list.push(b);
  }
  const other = (b: ReleaseBinary, by: OtherBuild['by']): OtherBuild => ({
    path: b.path,
    fileName: b.fileName,
    component: b.component,
    productVersion: b.productVersion,
    by,
  });
  return (path, seen) => {
    if (seen.state === 'wrong-content') {
      const match = byChecksum.get(seen.actualSha256);
      return match && match.path !== path ? other(match, 'sha256') : undefined;
    }
    if (seen.state !== 'wrong-size' || seen.actualSize === undefined) return undefined;
    const matches = (bySize.get(seen.actualSize) ?? []).filter((b) => b.path !== path);
    // A size shared by several entries names none of them.
    return matches.length === 1 ? other(matches[0]!, 'size') : undefined;
  };
}

/** The words for one file's problem: which file, what is there, and what the release lists instead. */
function problemMessage(version: string, b: ReleaseBinary, p: Omit<ReleaseFileProblem, 'message'>): string {
  const listed = `release ${version} lists ${b.component} ${b.productVersion}, ${b.size} bytes, SHA-256 ${b.checksum}`;
  switch (p.problem) {
    case 'missing':
      return `${b.path} (${b.component} ${b.productVersion}) is missing.`;
    case 'unreadable':
      return `${b.path} (${b.component} ${b.productVersion}) is there but cannot be read or fetched.`;
    case 'other-build': {
      const o = p.otherBuild!;
      const how = o.by === 'sha256' ? 'holds the bytes of' : `is ${p.actual?.size} bytes, the size of`;
      return `${b.path} ${how} ${o.fileName} (${o.component} ${o.productVersion}): another build under this release's name; ${listed}.`;
    }
    case 'wrong-bytes':
      return p.actual?.sha256 !== undefined
        ? `${b.path} has the right size but other bytes (SHA-256 ${p.actual.sha256}) that no catalog entry lists; ${listed}.`
        : `${b.path} is ${p.actual?.size ?? 'not'} bytes${p.actual?.size !== undefined && p.actual.size < b.size ? ' (a partial download?)' : ''}, which matches no other catalog entry; ${listed}.`;
  }
}

function problemOf(version: string, b: ReleaseBinary, seen: SeenFile, find: ReturnType<typeof otherBuildFinder>): ReleaseFileProblem | undefined {
  if (seen.state === 'present') return undefined;
  const base = { path: b.path, component: b.component, productVersion: b.productVersion, expected: { size: b.size, sha256: b.checksum } };
  let p: Omit<ReleaseFileProblem, 'message'>;
  if (seen.state === 'missing' || seen.state === 'unreadable') p = { ...base, problem: seen.state };
  else {
    const actual = seen.state === 'wrong-size' ? (seen.actualSize !== undefined ? { size: seen.actualSize } : {}) : { size: b.size, sha256: seen.actualSha256 };
    const otherBuild = find(b.path, seen);
    p = { ...base, problem: otherBuild ? 'other-build' : 'wrong-bytes', actual, ...(otherBuild ? { otherBuild } : {}) };
  }
  return { ...p, message: problemMessage(version, b, p) };
}

/** The components of the files left out, each once: "ESX_HOST, HCX, NSX_T_MANAGER and 12 more". */
function componentsOf(files: LeftOutFile[]): string {
  const names = [...new Set(files.map((f) => f.component))].sort();
  const shown = names.slice(0, SHOWN_COMPONENTS).join(', ');
  return names.length > SHOWN_COMPONENTS ? `${shown} and ${names.length - SHOWN_COMPONENTS} more` : shown;
}
const SHOWN_COMPONENTS = 6;

/** What a release's recorded selection left out, in words: "15 left out by the selection of component VCENTER: ESX_HOST, ...". */
function leftOutWords(v: Omit<ReleaseVerdict, 'message'>, selection: string | undefined): string {
  return `${v.leftOut.length} left out by the selection${selection ? ` of ${selection}` : ''}: ${componentsOf(v.leftOut)}`;
}

/** The release in one sentence. */
function releaseMessage(v: Omit<ReleaseVerdict, 'message'>, own: number, selection: string | undefined): string {
  const c = v.counts;
  const of = (n: number, what: string) => `${n} of its ${c.binaries} ${c.binaries === 1 ? 'binary' : 'binaries'} ${what}`;
  const alsoLeftOut = c.leftOut ? ` (${leftOutWords(v, selection)})` : '';
  switch (v.state) {
    case 'complete':
      return `Release ${v.version} is complete: ${c.binaries === 1 ? 'its binary is here with its bytes' : `all ${c.binaries} binaries are here with their bytes`}.`;
    case 'complete-as-chosen': {
      const chosen = c.binaries - c.leftOut;
      return `Release ${v.version} is complete as chosen: ${chosen === 1 ? 'the binary chosen is here with its bytes' : `all ${chosen} binaries chosen are here with their bytes`}; ${leftOutWords(v, selection)}.`;
    }
    case 'metadata-only':
      if (c.binaries === 0) return `Release ${v.version} is metadata only: the catalog names no binary of it.`;
      if (c.leftOut)
        return `Release ${v.version} is metadata only: ${own === 0 ? 'none of its binaries was' : `none of the ${own} binaries only it lists was`} chosen (${leftOutWords(v, selection)}); the installer cannot download it from this depot.`;
      return `Release ${v.version} is metadata only: ${own === 0 ? 'none of its binaries is' : `none of the ${own} binaries only it lists is`} here (a depot cut to other releases); the installer cannot download it from this depot.`;
    case 'binaries-missing':
      return `Release ${v.version} has ${of(c.missing + c.unreadable, c.unreadable === 0 ? 'missing' : c.missing === 0 ? 'unreadable' : 'missing or unreadable')}${alsoLeftOut}: the installer fails their download.`;
    case 'wrong-binaries':
      return `Release ${v.version} has ${of(c.wrongBytes, 'holding other bytes than it lists')}${c.missing + c.unreadable ? ` and ${c.missing + c.unreadable} missing or unreadable` : ''}${alsoLeftOut}: the installer fails their download's checks.`;
  }
}

/** Whether none of the binaries only this release lists is here (none at all, when it lists none of its own). */
const noneOfItsOwn = (own: number, ownThere: number, there: number) => ownThere === 0 && (own > 0 || there === 0);

function judgeRelease(
  plan: ReleasePlan,
  seen: (path: string) => SeenFile,
  owners: Map<string, number>,
  find: ReturnType<typeof otherBuildFinder>,
  selection?: DepotSelection,
) {
  const files: ReleaseFileProblem[] = [];
  const leftOut: LeftOutFile[] = [];
  let there = 0;
  let ownThere = 0;
  let own = 0;
  for (const b of plan.binaries) {
    const s = seen(b.path);
    const isOwn = owners.get(b.path) === 1;
    if (isOwn) own++;
    if (s.state !== 'missing') {
      there++;
      if (isOwn) ownThere++;
    } else if (selection && !selection.chosen.has(b.path)) {
      leftOut.push({ path: b.path, component: b.component, productVersion: b.productVersion });
      continue;
    }
    const problem = problemOf(plan.version, b, s, find);
    if (problem) files.push(problem);
  }
  const count = (p: ReleaseFileProblem['problem'][]) => files.filter((f) => p.includes(f.problem)).length;
  const counts = {
    binaries: plan.binaries.length,
    present: plan.binaries.length - files.length - leftOut.length,
    missing: count(['missing']),
    wrongBytes: count(['other-build', 'wrong-bytes']),
    unreadable: count(['unreadable']),
    leftOut: leftOut.length,
  };
  const absent = new Set(files.filter((f) => f.problem === 'missing').map((f) => f.path));
  const state: ReleaseState =
    counts.wrongBytes > 0
      ? 'wrong-binaries'
      : files.length === 0 && plan.binaries.length > 0
        ? leftOut.length === 0
          ? 'complete'
          : noneOfItsOwn(own, ownThere, there)
            ? 'metadata-only'
            : 'complete-as-chosen'
        : // A binary chosen and missing is missing, whatever else the release holds.
          !selection && noneOfItsOwn(own, ownThere, there)
          ? 'metadata-only'
          : 'binaries-missing';
  const total = plan.binaries.reduce((sum, b) => sum + b.size, 0);
  const notHere = new Set([...files, ...leftOut].map((f) => f.path));
  const present = plan.binaries.filter((b) => !notHere.has(b.path)).reduce((sum, b) => sum + b.size, 0);
  const verdict = { version: plan.version, state, counts, bytes: { total, present }, files, leftOut };
  return { verdict: { ...verdict, message: releaseMessage(verdict, own, selection?.words) }, absent };
}

/**
 * Each release's state from what a reader saw of each binary (`seen` is asked once per path a release lists).
 * A binary listed by several releases belongs to each; a release is metadata only when none of the binaries only
 * it lists is there, so that a depot cut to one release does not make the next, which shares its unchanged
 * components, look half present. A depot that records a selection is judged on it: a binary it did not choose and
 * that is not here is left out; without one, a cut is read from which releases hold binaries.
 */
export function judgeReleases(plans: ReleasePlans, seen: (path: string) => SeenFile, selection?: DepotSelection): ReleaseJudgement {
  const owners = new Map<string, number>();
  for (const r of plans.releases) for (const b of r.binaries) owners.set(b.path, (owners.get(b.path) ?? 0) + 1);
  const find = otherBuildFinder(plans.catalog);
  const judged = plans.releases.map((r) => judgeRelease(r, seen, owners, find, selection));
  const releases = judged.map((j) => j.verdict);
  if (selection) {
    const leftOut = new Set(plans.catalog.filter((b) => !selection.chosen.has(b.path) && seen(b.path).state === 'missing').map((b) => b.path));
    return { grouping: plans.grouping, releases, cut: leftOut.size > 0, leftOut, selection: selection.words };
  }
  // A release that holds binaries of its own (complete or not), beside one that holds none: only then is an
  // absent release a choice. Shared binaries alone, with no release's own builds, make no release installable.
  const holds = (r: ReleaseVerdict) => r.state !== 'metadata-only' && r.counts.present + r.counts.wrongBytes + r.counts.unreadable > 0;
  const cut = releases.some((r) => r.state === 'metadata-only') && releases.some(holds);
  const leftOut = new Set<string>();
  if (cut) {
    // Absent on purpose: listed only by metadata-only releases, or by no release at all.
    const needed = new Set(plans.releases.filter((_, i) => releases[i]!.state !== 'metadata-only').flatMap((r) => r.binaries.map((b) => b.path)));
    for (const [i, j] of judged.entries()) if (releases[i]!.state === 'metadata-only') for (const p of j.absent) if (!needed.has(p)) leftOut.add(p);
    for (const b of plans.others) if (!needed.has(b.path) && seen(b.path).state === 'missing') leftOut.add(b.path);
  }
  return { grouping: plans.grouping, releases, cut, leftOut };
}
