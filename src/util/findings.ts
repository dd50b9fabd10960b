/**
 * A finding of a verification or a check: a stable id scripts can key on, a
 * severity, what was seen, what the installer would do, and how to fix it.
 */
export type Severity = 'error' | 'warning' | 'info';

export interface Finding {
  /** Stable, dotted, lower-case: e.g. `layout.component.misspelt`. */
  id: string;
  severity: Severity;
  message: string;
  /** A depot-relative path or URL the finding is about. */
  path?: string;
  /** What was observed (status codes, sizes, certificate names...). */
  evidence?: Record<string, unknown>;
  /** What the installer would do when it meets this. */
  installer?: string;
  /** What to run or change to fix it. */
  fix?: string;
}

export function hasErrors(findings: readonly Finding[]): boolean {
  return findings.some((f) => f.severity === 'error');
}

export function countBySeverity(findings: readonly Finding[]): Record<Severity, number> {
  const counts: Record<Severity, number> = { error: 0, warning: 0, info: 0 };
  for (const f of findings) counts[f.severity]++;
  return counts;
}

/** One line per finding, for people. */
export function formatFinding(f: Finding): string[] {
  const mark = f.severity === 'error' ? 'ERROR' : f.severity === 'warning' ? 'WARN ' : 'info ';
  const lines = [`${mark} ${f.id}: ${f.message}`];
  if (f.installer) lines.push(`      installer: ${f.installer}`);
  if (f.fix) lines.push(`      fix: ${f.fix}`);
  return lines;
}
