import { EXPORT_DEBIAN, SYSTEMCTL_RELOAD, type ExportTarget } from '../constants.js';

/**
 * The command that reloads an exported site of one kind once its files change, the configuration tested
 * first so that a refused change leaves the old one served: the exporters' next steps print it (with `sudo`)
 * and the CA move runs or prints it. `unit`: the systemd unit that runs depotkit serve, whose reload is
 * SIGHUP. Caddy's check reads a world-readable file and needs no root.
 */
export function reloadCommand(server: ExportTarget, unit: string, sudo: '' | 'sudo ' = ''): string {
  switch (server) {
    case 'nginx':
    case 'apache':
      return `${sudo}${EXPORT_DEBIAN[server].test} && ${sudo}${EXPORT_DEBIAN[server].reload}`;
    case 'caddy':
      return `${EXPORT_DEBIAN.caddy.validate} && ${sudo}${EXPORT_DEBIAN.caddy.reload}`;
    case 'systemd':
      return `${sudo}${SYSTEMCTL_RELOAD} ${unit}`;
  }
}
