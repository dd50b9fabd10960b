import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { SERVE_OPTIONS, serveCommandLine, type ServeOptionSpec } from '../../src/server/command-line.js';

const spelt = (o: ServeOptionSpec): string => (o.argument ? `${o.flag} ${o.argument}` : o.flag);

const program = await buildProgram();

const flagsOf = (name: string): string[] => {
  const cmd = program.commands.find((c: Command) => c.name() === name)!;
  return cmd.options.map((o) => o.flags);
};

describe("serve's options as data", () => {
  it('are the options serve has, spelt and ordered as its help shows them', () => {
    const declared = Object.values(SERVE_OPTIONS).map(spelt);
    expect(flagsOf('serve').filter((f) => declared.includes(f))).toEqual(declared);
  });

  it("export declares serve's options it forwards to the unit with serve's spelling", () => {
    const exported = flagsOf('export');
    for (const name of ['host', 'port', 'cert', 'key', 'ca', 'dns', 'ip', 'htpasswd', 'open', 'workers', 'accessLog', 'logFormat', 'grace'] as const) {
      expect(exported, name).toContain(spelt(SERVE_OPTIONS[name]));
    }
  });

  it('writes the command line in the order given: a list once per item, a switch alone, nothing for what is not given', () => {
    expect(
      serveCommandLine('/srv/depot', [
        ['port', 443],
        ['cert', undefined],
        ['open', ['a', 'b']],
        ['openHcl', true],
        ['http', false],
        ['accessLog', '-'],
      ]),
    ).toEqual(['serve', '/srv/depot', '--port', '443', '--open', 'a', '--open', 'b', '--open-hcl', '--access-log', '-']);
  });
});
