import type { Command } from 'commander';

/**
 * The library speaks of an option or an operation by its library name between backticks (`force`,
 * `volumeSize`, `makeCa`), so that its messages hold for a caller without the command line. The CLI
 * shows each as the user types it: an option as its flag, an operation as the command that does it.
 */

/**
 * Operations a library hint names, as the command line runs them. An operation that takes the
 * library's values is its command alone, each value after its option's name (`checkDepot`
 * https://depot `caPems` ca.pem: depotkit check https://depot --ca ca.pem).
 */
export const OPERATION_COMMANDS: Readonly<Record<string, string>> = {
  makeCa: 'depotkit cert ca --out <ca-dir>',
  trustCa: 'depotkit installer trust',
  connectDepot: 'depotkit installer connect-depot',
  syncDepot: 'depotkit installer sync',
  listReleases: 'depotkit installer releases',
  checkDepot: 'depotkit check',
  buildDepot: 'depotkit depot build',
  makeDemoDepot: 'depotkit depot demo',
  issueCert: 'depotkit cert issue',
  renewCert: 'depotkit cert renew',
  inspectCert: 'depotkit cert inspect',
  serveDepot: 'depotkit serve',
  checkEsxDepot: 'depotkit esx check',
  trustVcenterCa: 'depotkit vcenter trust',
  connectVcenterDepot: 'depotkit vcenter depot',
};

/** Library option names whose flag is not their name in kebab case. */
export const FLAG_OF_OPTION: Readonly<Record<string, string>> = {
  caPems: '--ca',
  signingCertPem: '--signing-cert',
  caDir: '--ca',
  outDir: '--out',
  ips: '--ip',
  serverCaPems: '--server-ca',
  openPrefixes: '--open',
  openPaths: '--open-path',
  htpasswdFile: '--htpasswd',
  // A password comes from a file (or the environment), never from the command line.
  password: '--password-file',
  proxyPassword: '--proxy-password-file',
  // curl's spelling: commander reads --no-proxy as the negation of --proxy.
  noProxy: '--noproxy',
};

/** Every flag of `program` and its commands: what a library name must be among (the tests hold it so). */
export function flagsOf(program: Command): Set<string> {
  const flags = new Set<string>();
  const walk = (cmd: Command): void => {
    for (const option of cmd.options) if (option.long) flags.add(option.long);
    cmd.commands.forEach(walk);
  };
  walk(program);
  return flags;
}

const kebab = (name: string): string => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/**
 * How the command line shows the library name `name`: its operation's command, or its flag. With `flags` (every
 * flag of the whole program), undefined for a name no command has. The CLI loads only the command it runs, so
 * a hint that names another command's option (`serveDepot` <dir> `openPrefixes` x, printed by check) is shown
 * without asking the loaded commands; test/architecture/flags.test.ts holds every library name to a flag of
 * the whole program, and test/cli/pasteable.test.ts every command line printed to its command's options.
 */
export function commandLineWord(name: string, flags?: ReadonlySet<string>): string | undefined {
  const operation = OPERATION_COMMANDS[name];
  if (operation) return operation;
  const flag = FLAG_OF_OPTION[name] ?? `--${kebab(name)}`;
  return !flags || flags.has(flag) ? flag : undefined;
}

const NAMED = /`([a-z][A-Za-z0-9]*)`/g;

/** `text` with each option and operation the library names shown as the command line spells it. */
export function inCommandLineWords(text: string): string {
  return text.replace(NAMED, (whole, name: string) => commandLineWord(name) ?? whole);
}

/** The names between backticks in `text`, for the test that each has its command-line word. */
export function namesIn(text: string): string[] {
  return [...text.matchAll(NAMED)].map((m) => m[1]!);
}
