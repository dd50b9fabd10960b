/**
 * The top-level commands in the order of the flow (make the depot, its certificate, serve it, check it,
 * point the installer at it), each with its aliases: the one list, which the loader of commands
 * (commands.ts) and the wording of hints (process.ts) both read. It imports nothing, so that process.ts,
 * the first module the CLI evaluates, stays light.
 */
export const TOP_LEVEL_NAMES = [
  ['depot'],
  ['esx'],
  ['cert'],
  ['serve'],
  ['check'],
  ['installer'],
  ['mgmt', 'vcenter'],
  ['export'],
  ['sim'],
  ['start', 'quickstart'],
] as const;

/** A top-level command by its first name. */
export type TopLevelCommand = (typeof TOP_LEVEL_NAMES)[number][0];
