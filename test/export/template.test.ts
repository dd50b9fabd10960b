import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TEMPLATE_NAMES, loadTemplate, renderTemplate } from '../../src/export/template.js';
import { basicAuthDirective, caddyVersionOption, parseCaddyVersion } from '../../src/export/caddy.js';
import { REPO_ROOT } from '../helpers/temp.js';

describe('the template syntax', () => {
  it('fills placeholders, keeps everything else byte for byte', () => {
    expect(renderTemplate('listen {{port}} ssl; # $host {x}\n', { port: 8443 })).toBe('listen 8443 ssl; # $host {x}\n');
  });

  it('includes a section when its value is true or a text, the inverse when it is false or empty', () => {
    const text = 'a\n{{#auth}}\nauth {{file}};\n{{/auth}}\n{{^auth}}\nopen;\n{{/auth}}\nz\n';
    expect(renderTemplate(text, { auth: true, file: '/f' })).toBe('a\nauth /f;\nz\n');
    expect(renderTemplate(text, { auth: false, file: '/f' })).toBe('a\nopen;\nz\n');
    expect(renderTemplate('[{{#log}}log {{log}}{{/log}}]', { log: '' })).toBe('[]');
  });

  it('repeats a section per item of a list, the item fields as placeholders over the outer ones', () => {
    const text = 'x{{#open}} /{{prefix}}/*{{/open}}\n{{#open}}\nlocation /{{prefix}}/ { {{name}} }\n{{/open}}\n';
    expect(renderTemplate(text, { name: 'depot', open: [{ prefix: 'PROD/vsan/hcl' }, { prefix: 'umds' }] })).toBe(
      'x /PROD/vsan/hcl/* /umds/*\nlocation /PROD/vsan/hcl/ { depot }\nlocation /umds/ { depot }\n',
    );
    expect(renderTemplate(text, { name: 'depot', open: [] })).toBe('x\n');
  });

  it('nests sections of the same name', () => {
    expect(renderTemplate('{{#a}}1{{#a}}2{{/a}}3{{/a}}', { a: true })).toBe('123');
  });

  it('refuses a placeholder without a value, an unclosed or stray section, and a list where text belongs', () => {
    expect(() => renderTemplate('{{missing}}', {})).toThrow(/no value for \{\{missing\}\}/);
    expect(() => renderTemplate('{{#a}}x', { a: true })).toThrow(/never closed/);
    expect(() => renderTemplate('x{{/a}}', { a: true })).toThrow(/closes nothing/);
    expect(() => renderTemplate('{{a}}', { a: [] })).toThrow(/not a text/);
  });

  it('loads every template from templates/ at the repository root', async () => {
    for (const name of TEMPLATE_NAMES) {
      expect(await loadTemplate(name)).toBe(await readFile(join(REPO_ROOT, 'templates', name), 'utf8'));
    }
  });
});

describe("Caddy's Basic auth directive by version", () => {
  it('reads `caddy version` as Debian and upstream builds print it', () => {
    expect(parseCaddyVersion('2.6.2\n')).toBe('2.6.2');
    expect(parseCaddyVersion('v2.8.4 h1:q3pe0wpBj1OcHFZ3n/1nl4V4bxBrYoSoab7rL9BMYNk=\n')).toBe('2.8.4');
    expect(parseCaddyVersion('no version here')).toBeUndefined();
  });

  it('is basicauth before 2.8 and basic_auth from 2.8 on', () => {
    expect(basicAuthDirective('2.6.2')).toBe('basicauth');
    expect(basicAuthDirective('2.7.6')).toBe('basicauth');
    expect(basicAuthDirective('2.8')).toBe('basic_auth');
    expect(basicAuthDirective('2.10.0')).toBe('basic_auth');
  });

  it('takes --caddy-version as 2.6, 2.6.2 or v2.8.4, and nothing else', () => {
    expect(caddyVersionOption('v2.8.4')).toBe('2.8.4');
    expect(caddyVersionOption('2.6')).toBe('2.6');
    expect(() => caddyVersionOption('latest')).toThrow(/not a Caddy 2 version/);
    expect(() => caddyVersionOption('1.0.4')).toThrow(/not a Caddy 2 version/);
  });
});
