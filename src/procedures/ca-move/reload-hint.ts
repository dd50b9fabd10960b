import { EXPORT_DEFAULT_NAME, EXPORT_TARGETS } from '../../constants.js';
import { reloadCommand } from '../../export/index.js';
import type { ReloadHint, ServedDepot } from './types.js';

/** The reload to run by hand: the site's own when its kind is known, each kind's otherwise. */
export function reloadHints(served: ServedDepot): ReloadHint[] {
  if (served.kind === 'serve') return [];
  const unit = served.unit ?? EXPORT_DEFAULT_NAME;
  const kinds = served.server ? [served.server] : EXPORT_TARGETS;
  return kinds.map((server) => ({ server, command: reloadCommand(server, unit) }));
}

/** The hints as a clause: "nginx: `...`; apache: `...`". */
export function reloadHintText(hints: ReloadHint[]): string {
  return hints.map((h) => `${h.server}: ${h.command}`).join('; ');
}
