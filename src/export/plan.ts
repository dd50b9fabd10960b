import { planCaddy } from './caddyfile.js';
import { planApache, planNginx } from './sites.js';
import { statusFiles } from './status.js';
import { planSystemd } from './systemd.js';
import type { ExportContext, ExportOptions, Plan } from './types.js';

/** What the export of `options.target` writes and says, before anything is written. */
export async function plan(options: ExportOptions, c: ExportContext): Promise<Plan> {
  const status = await statusFiles(options, c);
  switch (options.target) {
    case 'nginx':
      return planNginx(c, status);
    case 'apache':
      return planApache(c, status);
    case 'caddy':
      return planCaddy(options, c, status);
    case 'systemd':
      return planSystemd(options, c);
  }
}
