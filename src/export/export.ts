import { EXPORT_TARGETS } from '../constants.js';
import { usageError } from '../util/errors.js';
import { exportContext } from './inputs.js';
import { plan } from './plan.js';
import { checkCommand } from './steps.js';
import { SECRET_MODE, type ExportOptions, type ExportReport } from './types.js';
import { writePlanned } from './write.js';

/**
 * Writes the configuration of `options.target` serving the depot as depotkit serve does, and says what to
 * do with it: the options checked, the files planned, written, and the next steps for what could not be
 * done here.
 */
export async function exportConfig(options: ExportOptions): Promise<ExportReport> {
  if (!EXPORT_TARGETS.includes(options.target))
    throw usageError(`"${options.target}" is not a server depotkit exports for; choose one of ${EXPORT_TARGETS.join(', ')}.`);
  const context = await exportContext(options);
  const planned = await plan(options, context);
  const files = await writePlanned(planned.files, context, options.force);
  const unowned = files.filter((f) => f.mode === SECRET_MODE && !f.group).map((f) => f.path);
  return {
    target: options.target,
    root: context.root,
    url: `https://${context.serverName}${context.urlPort}`,
    files,
    reads: planned.reads,
    open: context.open,
    ...(planned.caddy ? { caddy: planned.caddy } : {}),
    nextSteps: planned.nextSteps(unowned),
    check: checkCommand(context),
    warnings: context.warnings,
  };
}
