import { PROC_FILES } from '../constants.js';
import { readFileBounded } from './bounded-read.js';

/**
 * Who a process is, beyond its pid: a pid is reused once its process is gone (after a restart, soon), so a
 * pid written down earlier may name another process now. Linux alone says these (procfs); elsewhere each is
 * undefined and the pid is all there is.
 */
export interface ProcessIdentity {
  /** The boot the process runs in: every process of another boot is gone. */
  bootId?: string;
  /** When it started, in clock ticks since boot: a process with its pid that started at another moment is another. */
  startTicks?: number;
}

/** Far more than a stat line or serve's arguments hold. */
const PROC_READ_MAX = 64 * 1024;

async function readProc(path: string): Promise<string | undefined> {
  try {
    return (await readFileBounded(path, PROC_READ_MAX, 'procfs file')).toString('utf8');
  } catch {
    return undefined;
  }
}

async function startTicks(pid: number): Promise<number | undefined> {
  const line = await readProc(PROC_FILES.stat(pid));
  if (line === undefined) return undefined;
  // The second field, the command's name in parentheses, may hold spaces and parentheses: fields are counted after its last one.
  const fields = line.slice(line.lastIndexOf(')') + 2).split(' ');
  const value = Number(fields[PROC_FILES.statStartTimeField - 3]);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** The identity of the process `pid` now; an empty one when it is gone or procfs cannot tell. */
export async function processIdentity(pid: number): Promise<ProcessIdentity> {
  const [boot, start] = await Promise.all([readProc(PROC_FILES.bootId), startTicks(pid)]);
  return { ...(boot?.trim() ? { bootId: boot.trim() } : {}), ...(start !== undefined ? { startTicks: start } : {}) };
}

/**
 * Whether the process `pid`, running now, is another than the one `recorded` describes: from another boot, or
 * started at another moment. False when it cannot be told (nothing recorded, or procfs silent).
 */
export async function isAnotherProcess(pid: number, recorded: ProcessIdentity): Promise<boolean> {
  const now = await processIdentity(pid);
  if (recorded.bootId !== undefined && now.bootId !== undefined && recorded.bootId !== now.bootId) return true;
  return recorded.startTicks !== undefined && now.startTicks !== undefined && recorded.startTicks !== now.startTicks;
}

/** The arguments of the process `pid` (its program first), or undefined when it is gone or procfs cannot tell. */
export async function processArguments(pid: number): Promise<string[] | undefined> {
  const text = await readProc(PROC_FILES.cmdline(pid));
  // Each argument ends with a NUL; a process whose arguments are gone (a zombie) has none.
  return text === undefined ? undefined : text.split('\0').slice(0, -1);
}
