import { readFile } from 'node:fs/promises';

/**
 * The templates in templates/ use a tiny placeholder syntax, so that each stays a file a person
 * who knows that server can read:
 *
 * - `{{name}}`: the value, as text;
 * - `{{#name}}...{{/name}}`: the part once when the value is true or a non-empty text, once per
 *   item when it is a list (the item's fields become placeholders inside);
 * - `{{^name}}...{{/name}}`: the part when the value is false, empty or an empty list.
 *
 * A line holding only a section tag leaves no line behind. A placeholder without a value is a
 * programming error, never rendered as empty.
 */
export type TemplateValue = string | number | boolean | undefined | TemplateScope[];
export interface TemplateScope {
  [name: string]: TemplateValue;
}

const TAG = /\{\{([#^/]?)(\w+)\}\}/g;

export function renderTemplate(text: string, scope: TemplateScope, source = 'template'): string {
  const tidy = text.replace(/^[ \t]*(\{\{[#^/]\w+\}\})[ \t]*\r?\n/gm, '$1');
  return render(tidy, [scope], source);
}

function lookup(stack: TemplateScope[], name: string, source: string): TemplateValue {
  for (let i = stack.length - 1; i >= 0; i--) {
    if (Object.hasOwn(stack[i]!, name)) return stack[i]![name];
  }
  throw new Error(`${source}: no value for {{${name}}}`);
}

/** Where the section opened just before `from` closes: its `{{/name}}`, past any nested one of the same name. */
function sectionEnd(text: string, name: string, from: number, source: string): { start: number; end: number } {
  const tag = new RegExp(`\\{\\{([#^/])${name}\\}\\}`, 'g');
  tag.lastIndex = from;
  let depth = 1;
  for (let m = tag.exec(text); m; m = tag.exec(text)) {
    depth += m[1] === '/' ? -1 : 1;
    if (depth === 0) return { start: m.index, end: tag.lastIndex };
  }
  throw new Error(`${source}: {{#${name}}} is never closed`);
}

function render(text: string, stack: TemplateScope[], source: string): string {
  let out = '';
  let at = 0;
  const tag = new RegExp(TAG.source, 'g');
  for (let m = tag.exec(text); m; m = tag.exec(text)) {
    const [, kind, name] = m as unknown as [string, string, string];
    out += text.slice(at, m.index);
    if (kind === '') {
      const value = lookup(stack, name, source);
      if (typeof value === 'object' || value === undefined) throw new Error(`${source}: {{${name}}} is not a text`);
      out += String(value);
      at = tag.lastIndex;
      continue;
    }
    if (kind === '/') throw new Error(`${source}: {{/${name}}} closes nothing`);
    const { start, end } = sectionEnd(text, name, tag.lastIndex, source);
    const body = text.slice(tag.lastIndex, start);
    const value = lookup(stack, name, source);
    const empty = value === undefined || value === false || value === '' || (Array.isArray(value) && value.length === 0);
    if (kind === '^') {
      if (empty) out += render(body, stack, source);
    } else if (Array.isArray(value)) {
      for (const item of value) out += render(body, [...stack, item], source);
    } else if (!empty) {
      out += render(body, stack, source);
    }
    at = end;
    tag.lastIndex = end;
  }
  return out + text.slice(at);
}

// The single executable carries the templates in its code (see scripts/package.ts); otherwise
// they are read from templates/ beside dist/ (or src/).
declare const __DEPOTKIT_TEMPLATES__: Readonly<Record<string, string>> | undefined;

/** The text of templates/<name>. */
export async function loadTemplate(name: string): Promise<string> {
  if (typeof __DEPOTKIT_TEMPLATES__ !== 'undefined') {
    const text = __DEPOTKIT_TEMPLATES__[name];
    if (text === undefined) throw new Error(`No template ${name} in this build.`);
    return text;
  }
  return readFile(new URL(`../../templates/${name}`, import.meta.url), 'utf8');
}

/** Names of the files in templates/, for the single executable's build. */
export const TEMPLATE_NAMES = ['nginx.conf', 'apache.conf', 'Caddyfile', 'systemd.service', 'logrotate', 'sysusers.conf'] as const;
export type TemplateName = (typeof TEMPLATE_NAMES)[number];
