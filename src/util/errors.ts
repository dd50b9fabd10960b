/**
 * Exit codes of every command. `environment`: the machine could not do it
 * (no space left, disk quota exceeded), neither the input's fault nor a
 * finding about the thing checked; freeing space and running again helps.
 */
export const EXIT = { ok: 0, problems: 1, usage: 2, environment: 3 } as const;

/**
 * An expected failure: one clear sentence for the user, an exit code, and
 * optionally what to do about it. The CLI prints these without a stack trace.
 */
export class DepotkitError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.usage,
    /** What to do next: the one name of the next step, as findings' `fix`. */
    readonly fix?: string,
  ) {
    super(message);
    this.name = 'DepotkitError';
  }
}

/** Bad usage or input: exit 2. */
export function usageError(message: string, fix?: string): DepotkitError {
  return new DepotkitError(message, EXIT.usage, fix);
}

/** Arguments that do not go together or are missing (exit 2): a command line shows its usage line after it. */
export class ArgumentsError extends DepotkitError {}

export function argumentsError(message: string): ArgumentsError {
  return new ArgumentsError(message, EXIT.usage);
}

const ENVIRONMENT_HINT = 'Free some space and run the command again; no partial file was left at a final path.';

/** Out of space or over quota: the environment's failure, whatever was being written. */
export function isEnvironmentError(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/** Turns a Node system error about `path` into one sentence a user can act on. */
export function describeFsError(err: unknown, path: string): DepotkitError {
  const { code, syscall } = (err as NodeJS.ErrnoException) ?? {};
  // A file where a folder is to be made: --force cannot help, so it must not be suggested.
  if (syscall === 'mkdir' && code === 'EEXIST')
    return usageError(`${(err as NodeJS.ErrnoException).path ?? path} is a file, not a folder.`, 'Give a folder there, or move the file away.');
  if (syscall === 'mkdir' && code === 'ENOTDIR') return usageError(`${path} cannot be made: a part of its path is a file, not a folder.`);
  switch (code) {
    case 'ENOENT':
      return usageError(`${path} does not exist.`);
    case 'EACCES':
    case 'EPERM':
      return usageError(`${path} cannot be read or written: permission denied.`, 'Check the file mode and owner.');
    case 'ENOSPC':
      return new DepotkitError(`No space left on the device while writing ${path}.`, EXIT.environment, ENVIRONMENT_HINT);
    case 'EDQUOT':
      return new DepotkitError(`The disk quota is exceeded while writing ${path}.`, EXIT.environment, ENVIRONMENT_HINT);
    case 'EISDIR':
      return usageError(`${path} is a folder, a file was expected.`);
    case 'ENOTDIR':
      return usageError(`${path} is not a folder.`);
    case 'EEXIST':
      return usageError(`${path} already exists.`, 'Use `force` to replace it.');
    default:
      return new DepotkitError(`${path}: ${(err as Error)?.message ?? String(err)}`, EXIT.problems);
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
