import { EXPORT_DEBIAN, EXPORT_DEFAULT_NAME, EXPORT_TARGETS, SYSTEMCTL_RELOAD, type ExportTarget } from '../../constants.js';
import type { ServedDepot } from './types.js';

/** The command that reloads a site of one kind, to run by hand when the move does not run one. */
export interface ReloadHint {
  server: ExportTarget;
  command: string;
}

/**
 * The reload each exported kind's next steps give (the test of the
 * configuration first, so that a refused pair leaves the old one served); a
 * systemd unit runs depotkit serve, whose reload is SIGHUP.
 */
function commandOf(server: ExportTarget, unit: string): string {
  switch (server) {
    case 'nginx':
      return `${EXPORT_DEBIAN.nginx.test} && ${EXPORT_DEBIAN.nginx.reload}`;
    case 'apache':
      return `${EXPORT_DEBIAN.apache.test} && ${EXPORT_DEBIAN.apache.reload}`;
    case 'caddy':
      return `${EXPORT_DEBIAN.caddy.validate} && ${EXPORT_DEBIAN.caddy.reload}`;
    case 'systemd':
      return `${SYSTEMCTL_RELOAD} ${unit}`;
  }
}

/** The reload to run by hand: the site's own when its kind is known, each kind's otherwise. */
export function reloadHints(served: ServedDepot): ReloadHint[] {
  if (served.kind === 'serve') return [];
  const unit = served.unit ?? EXPORT_DEFAULT_NAME;
  const kinds = served.server ? [served.server] : EXPORT_TARGETS;
  return kinds.map((server) => ({ server, command: commandOf(server, unit) }));
}

/** The hints as a clause: "nginx: `...`; apache: `...`". */
export function reloadHintText(hints: ReloadHint[]): string {
  return hints.map((h) => `${h.server}: ${h.command}`).join('; ');
}
