/**
 * Control characters (C0, DEL, C1) in text that came from a file, an archive
 * or a server would act on a terminal: ESC starts colour and title
 * sequences, BEL rings, CR and LF forge lines. Bidirectional formatting
 * characters (U+202E and its kin) reorder what is shown, so that a name reads
 * as another. They are shown escaped instead, in the spelling of a JavaScript
 * string (`\x1b`, `\r`, `\n`, `\t`, `\u202e`).
 */
// DEL, C1 and the bidirectional formatting characters: what JSON.stringify leaves raw.
const BEYOND_C0 = '\\x7f-\\x9f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';
const CONTROL = new RegExp(`[\\x00-\\x1f${BEYOND_C0}]`, 'g');
const HAS_CONTROL = new RegExp(`[\\x00-\\x1f${BEYOND_C0}]`);
const CONTROL_IN_JSON = new RegExp(`[${BEYOND_C0}]`, 'g');

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

export function hasControlChars(text: string): boolean {
  return HAS_CONTROL.test(text);
}

export function escapeControlChars(text: string): string {
  return text.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0);
    return NAMED[c] ?? (code > 0xff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\x${code.toString(16).padStart(2, '0')}`);
  });
}

/**
 * JSON text with the characters JSON.stringify leaves raw (DEL, C1, the bidirectional ones) as
 * `\u` escapes: the same JSON, and nothing in it that acts on a terminal. JSON.stringify
 * escapes C0 itself; the line ends between its values are its layout and stay.
 */
export function escapeControlCharsInJson(json: string): string {
  return json.replace(CONTROL_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `1 file`, `2 files`: a count with its noun, singular for one (`plural` for nouns that do not take an s). */
export function plural(n: number, noun: string, pluralNoun = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : pluralNoun}`;
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

/** Edit distance between two strings (insertions, deletions, substitutions). */
export function levenshtein(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

/** The known name `name` was probably meant to be (case aside, or one or two typos away), if any. */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const exact = known.find((k) => k.toLowerCase() === name.toLowerCase());
  if (exact) return exact;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = levenshtein(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return bestDistance <= Math.min(2, Math.floor(name.length / 3)) ? best : undefined;
}
