/**
 * Every secret this process knows (passwords read from files, variables or a
 * prompt; passwords given to the clients; the tokens servers hand out), and
 * the one scrub that hides them in whatever leaves the process: the lines and
 * JSON the command line prints, and what is written to logs and reports. A
 * server may echo a password in any text it answers (an error message, a
 * remediation, a URL); the scrub hides it wherever it came from.
 */

/** Shown instead of a secret. */
export const HIDDEN = '***';

/**
 * Secrets shorter than this are not looked for: hiding every `ab` of a report would garble it
 * and hide nothing worth hiding (no installer, proxy or depot takes a password this short).
 */
const MIN_SECRET_LENGTH = 4;
/**
 * Secrets shorter than this are hidden as whole words only: a weak password such as `depot`
 * must not turn `depotkit` into `***kit` in every command line printed. Longer ones are hidden
 * wherever they stand.
 */
const ANYWHERE_LENGTH = 8;

/** The forms a secret takes in text: as given, and as a URL or a JSON string spells it. */
const forms = new Set<string>();
/** The forms, longest first, so that a secret inside another is not left half hidden; rebuilt when one is added. */
let patterns: { form: string; regex: RegExp }[] | undefined;

function pattern(form: string): RegExp {
  const literal = form.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
  return form.length >= ANYWHERE_LENGTH ? new RegExp(literal, 'g') : new RegExp(`(?<![\\p{L}\\p{N}])${literal}(?![\\p{L}\\p{N}])`, 'gu');
}

/** Remembers `secret` (and how a URL or JSON spells it) so that the scrub hides it; returns it. */
export function registerSecret<T extends string | undefined>(secret: T): T {
  if (secret === undefined || secret.length < MIN_SECRET_LENGTH) return secret;
  for (const form of [secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]) {
    if (!forms.has(form)) {
      forms.add(form);
      patterns = undefined;
    }
  }
  return secret;
}

/**
 * The password of any `scheme://user:password@` in the text, known or not: up to the last `@`
 * before a space or a quote, since a password written into a URL unencoded may hold `/`, `?` or `#`.
 */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/[^\s/?#@:"'<>]*):[^\s"'<>]*@/gi;

/** `text` with every known secret and every password in a URL's userinfo replaced by `***`. */
export function scrubSecrets(text: string): string {
  // A report of 10,000 rows scrubs some 100,000 strings: a plain search first spares most of them the regular expressions.
  let out = text.includes('://') ? text.replace(URL_USERINFO, (_, head: string) => `${head}:${HIDDEN}@`) : text;
  if (forms.size === 0) return out;
  patterns ??= [...forms].sort((a, b) => b.length - a.length).map((form) => ({ form, regex: pattern(form) }));
  for (const { form, regex } of patterns) if (out.includes(form)) out = out.replace(regex, HIDDEN);
  return out;
}

/**
 * Forgets every secret registered so far: for a program that runs one job after another in one process and must not
 * hide one job's words because an earlier job's password was the same word (the test suite runs its files so).
 */
export function forgetSecrets(): void {
  forms.clear();
  patterns = undefined;
}
