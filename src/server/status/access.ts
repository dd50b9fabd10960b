import { SERVE_PAGES } from '../../constants.js';
import type { Choice } from '../../depot/selection.js';
import { type CommandData, type Placeholder, commandLine } from './command-lines.js';
import type { StatusAccess, StatusOptions } from './types.js';

/** File names the commands use for what the reader saves: the CA certificate and the depot user's password. */
const CA_FILE = 'depot-ca.pem';
const PASSWORD_FILE = 'depot.pass';

const placeholder = (text: string): Placeholder => ({ placeholder: text });

interface Access {
  url: string;
  reachVia?: string;
  tls: boolean;
  /** The depot user, a placeholder when several may exist; undefined without auth. */
  who: string | Placeholder | undefined;
  ca: string | Placeholder;
  /** The selection the depot records, when one set of flags says it. */
  choice?: Choice;
}

/**
 * The recorded choices as one: a single choice, or several that each name only releases (or only components), whose
 * union one choice names. Choices of other kinds together have no one set of flags.
 */
function oneChoice(choices: Choice[] | undefined): Choice | undefined {
  if (!choices?.length) return undefined;
  if (choices.length === 1) return choices[0];
  const plain = choices.every((c) => c.imageType === undefined);
  if (plain && choices.every((c) => c.components.length === 0)) return { releases: [...new Set(choices.flatMap((c) => c.releases))], components: [] };
  if (plain && choices.every((c) => c.releases.length === 0)) return { releases: [], components: [...new Set(choices.flatMap((c) => c.components))] };
  return undefined;
}

/** `depotkit check` of this depot: through its CA, with the user's password file, on the selection it records. */
function checkCommand({ url, reachVia, tls, who, ca, choice }: Access): CommandData {
  const options: CommandData['options'] = [];
  if (reachVia !== undefined) options.push(['asHost', new URL(url).hostname]);
  if (tls) options.push(['caPems', ca]);
  if (who) options.push(['user', who], ['passwordFile', PASSWORD_FILE]);
  if (who && !tls) options.push(['allowHttpCredentials', true]);
  for (const r of choice?.releases ?? []) options.push(['release', r]);
  for (const c of choice?.components ?? []) options.push(['component', c]);
  if (choice?.imageType !== undefined) options.push(['imageType', choice.imageType]);
  return { operation: 'checkDepot', operand: reachVia ?? url, options };
}

/** `depotkit installer connect-depot` with this depot, with placeholders for the installer only the reader knows. */
function connectCommand({ url, tls, who, ca }: Access): CommandData {
  const options: CommandData['options'] = [
    ['installer', placeholder('https://<installer>')],
    ['passwordFile', placeholder('<installer admin password file>')],
  ];
  if (tls) options.push(['trustCa', ca]);
  options.push(['depotUrl', url]);
  if (who) options.push(['depotUser', who], ['depotPasswordFile', PASSWORD_FILE]);
  return { operation: 'connectDepot', options };
}

/** How the installer reaches the depot, and the commands that check it (on the selection it records) and connect the installer to it. */
export function statusAccess(options: StatusOptions, caKnown: boolean, choices?: Choice[]): StatusAccess {
  const choice = oneChoice(choices);
  const tls = options.certPem !== undefined;
  const auth: StatusAccess['auth'] = options.auth === undefined ? 'none' : 'user' in options.auth ? 'user' : 'htpasswd';
  const user = options.auth && 'user' in options.auth ? options.auth.user : undefined;
  const caPath = caKnown && options.caPath !== null ? (options.caPath ?? SERVE_PAGES.caCert) : undefined;
  const access: Access = {
    url: options.url,
    ...(options.reachVia !== undefined ? { reachVia: options.reachVia } : {}),
    tls,
    who: auth === 'none' ? undefined : (user ?? placeholder('<user>')),
    ca: caKnown ? CA_FILE : placeholder('<CA certificate file>'),
    ...(choice ? { choice } : {}),
  };
  return {
    url: options.url,
    tls,
    auth,
    ...(user !== undefined ? { user } : {}),
    openPrefixes: options.openPrefixes ?? [],
    ...(caPath !== undefined ? { caPath } : {}),
    commands: { check: commandLine(checkCommand(access)), installerDepot: commandLine(connectCommand(access)) },
  };
}
