/** A byte range, both ends inclusive. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Parses a Range header against a file of `size` bytes. Returns the one range
 * to send, 'unsatisfiable' (416), or undefined to ignore the header and send
 * the whole file: not a bytes range, malformed, or several ranges (RFC 9110
 * lets a server answer those with 200).
 */
export function parseRange(header: string, size: number): ByteRange | 'unsatisfiable' | undefined {
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match) return undefined;
  const [, first, last] = match as unknown as [string, string, string];
  if (first === '' && last === '') return undefined;
  if (first === '') {
    // Suffix range: the last N bytes.
    const n = Number(last);
    if (n === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
