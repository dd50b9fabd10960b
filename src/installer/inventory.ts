import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { INSTALLER_DEFAULT_USER, INVENTORY_ROLES, MGMT_DEFAULT_USER, SDDC_MANAGER_DEFAULT_USER, VCENTER_ROLE, type InventoryRole } from '../constants.js';
import type { ErrorObject } from 'ajv';
import { usageError } from '../util/errors.js';
import { readFileBounded } from '../util/fs.js';
import { INVENTORY_MAX_BYTES } from '../util/limits.js';
import { lazyValidator } from '../util/schema.js';
import { closestName } from '../util/text.js';
import { parseInstallerUrl } from './client.js';

/** One consumer of the depot (an installer, an SDDC Manager or a vCenter) and where its credentials come from. */
export interface InstallerTarget {
  name: string;
  url: string;
  /** The role it must answer in appliance-info, any when absent; `vcenter` for a vCenter, which takes the ESX depot. */
  role?: InventoryRole;
  /** The administrator by default: admin@local on an installer, administrator@vsphere.local on SDDC Manager and vCenter. */
  user: string;
  /** Environment variable holding the password. */
  passwordEnv?: string;
  /** File whose first line is the password (absolute). */
  passwordFile?: string;
  /** The consumer's certificate or CA (absolute path), to verify its HTTPS. */
  installerCa?: string;
  insecure?: boolean;
  /** Where the entry was given: an inventory's entry (the default) or the command's own options; what a hint about it names. */
  source?: 'inventory' | 'options';
}

const KEYS = ['name', 'url', 'role', 'user', 'passwordEnv', 'passwordFile', 'installerCa', 'insecure'] as const;

const text = { type: 'string', minLength: 1, pattern: '\\S' } as const;
const entryProperties = {
  name: text,
  url: text,
  role: { type: 'string', enum: [...INVENTORY_ROLES] },
  user: text,
  passwordEnv: text,
  passwordFile: text,
  installerCa: text,
  insecure: { type: 'boolean' },
} as const;

/** An inventory, once a bare list is read as `{installers: [...]}`, `consumers` as `installers` and a bare URL as `{url}`. */
const validateInventory = lazyValidator({
  type: 'object',
  additionalProperties: false,
  required: ['installers'],
  properties: {
    defaults: { type: 'object', additionalProperties: false, properties: entryProperties },
    installers: { type: 'array', minItems: 1, items: { type: 'object', additionalProperties: false, required: ['url'], properties: entryProperties } },
  },
});

/** The schema's first complaint as one sentence, naming the entry and the key. */
function inventoryError(path: string, error: ErrorObject): Error {
  const [, section, index, key] = error.instancePath.split('/');
  const where =
    section === 'installers' && index !== undefined
      ? `installer ${Number(index) + 1} of ${path}`
      : section === 'defaults'
        ? `"defaults" in ${path}`
        : `The inventory ${path}`;
  if (error.keyword === 'additionalProperties') {
    const unknown = String(error.params.additionalProperty);
    const known = section ? KEYS : ['defaults', 'installers', 'consumers'];
    const meant = closestName(unknown, known);
    return usageError(`${where} has an unknown key "${unknown}"${meant ? ` (did you mean "${meant}"?)` : ''}; known keys: ${known.join(', ')}.`);
  }
  if (error.keyword === 'required') return usageError(`${where} has no ${String(error.params.missingProperty)}.`);
  if (error.keyword === 'minItems') return usageError(`The inventory ${path} lists no installers.`);
  if (key === 'role') return usageError(`${where}: "role" must be ${INVENTORY_ROLES.slice(0, -1).join(', ')} or ${INVENTORY_ROLES.at(-1)}.`);
  if (key === 'insecure') return usageError(`${where}: "insecure" must be true or false.`);
  if (key) return usageError(`${where}: "${key}" must be a non-empty string.`);
  return usageError(
    section === 'installers' && index === undefined
      ? `"installers" in ${path} must be a list.`
      : `${where} must be a mapping${section === 'installers' ? ' with at least a url' : ''}.`,
  );
}

/** A JSON inventory read as JSON: the YAML parser takes seconds over 10,000 consumers, JSON.parse milliseconds. */
function parseJson(source: string): unknown {
  if (!/^\s*[[{]/.test(source)) return undefined;
  try {
    return JSON.parse(source) as unknown;
  } catch {
    return undefined; // YAML's flow style starts the same way; the YAML parser judges it.
  }
}

/**
 * Reads an inventory (YAML or JSON):
 *
 *     defaults: { user: admin@local, passwordEnv: INSTALLER_PASSWORD, installerCa: ca.pem }
 *     installers:
 *       - { name: site-a, url: https://installer-a.lab, passwordFile: secrets/a }
 *
 * A bare list of installers works too, and an installer may be a bare URL.
 * Relative paths are taken from the inventory's folder. Passwords themselves
 * never go in the inventory; unknown keys (a misspelt `usr`) are refused.
 */
export async function loadInventory(path: string): Promise<InstallerTarget[]> {
  // A regular file only, bounded: a FIFO or a device given by mistake is refused, not waited on or read without end.
  const source = (await readFileBounded(path, INVENTORY_MAX_BYTES, 'consumer inventory')).toString('utf8');
  let data: unknown = parseJson(source);
  if (data === undefined)
    try {
      // Loaded here, not at start-up: a command on one consumer reads no inventory.
      data = (createRequire(import.meta.url)('yaml') as typeof import('yaml')).parse(source);
    } catch (err) {
      throw usageError(`The inventory ${path} is neither YAML nor JSON: ${(err as Error).message.split('\n')[0]}`);
    }
  const base = dirname(resolve(path));
  const root = Array.isArray(data) ? { installers: data } : data;
  if (!isRecord(root)) throw usageError(`The inventory ${path} needs a list "installers" or "consumers" (or is itself that list).`);
  if ('consumers' in root) {
    if ('installers' in root) throw usageError(`The inventory ${path} has both "installers" and "consumers": they are the same list, give one.`);
    root.installers = root.consumers;
    delete root.consumers;
  }
  if (Array.isArray(root.installers)) root.installers = root.installers.map((entry: unknown) => (typeof entry === 'string' ? { url: entry } : entry));
  // Said before any other complaint: a password in the file is the one mistake that leaks.
  if (isRecord(root.defaults) && 'password' in root.defaults) throw passwordInInventory(path, 'the defaults');
  if (Array.isArray(root.installers)) {
    root.installers.forEach((entry: unknown, index: number) => {
      if (isRecord(entry) && 'password' in entry) throw passwordInInventory(path, `installer ${index + 1}`);
    });
  }
  if (!validateInventory(root)) {
    // A misspelt key also makes a required one missing: the misspelling is the news.
    const errors = validateInventory.errors!;
    throw inventoryError(path, errors.find((e) => e.keyword === 'additionalProperties') ?? errors[0]!);
  }
  const { defaults = {}, installers } = root as { defaults?: Record<string, unknown>; installers: Array<Record<string, unknown>> };
  if (bothTrusts(defaults)) throw usageError(`"defaults" in ${path} give installerCa and insecure: give one, not both.`);
  const targets = installers.map((entry, index) => {
    const where = `installer ${index + 1} of ${path}`;
    if (bothTrusts(entry)) throw usageError(`${where} gives installerCa and insecure: give one, not both.`);
    // An entry's own choice of trust replaces the default's other one.
    const inherited = { ...defaults };
    if (entry.insecure === true) delete inherited.installerCa;
    if (entry.installerCa !== undefined) delete inherited.insecure;
    const merged: Record<string, unknown> = { ...inherited, ...entry };
    const str = (key: string): string | undefined => (typeof merged[key] === 'string' ? (merged[key] as string).trim() : undefined);
    const origin = parseInstallerUrl(str('url')!);
    const passwordFile = str('passwordFile');
    const installerCa = str('installerCa');
    const role = str('role') as InventoryRole | undefined;
    return {
      name: str('name') ?? origin.host,
      url: origin.origin,
      ...(role ? { role } : {}),
      user: str('user') ?? defaultUser(role),
      passwordEnv: str('passwordEnv'),
      passwordFile: passwordFile ? resolve(base, passwordFile) : undefined,
      installerCa: installerCa ? resolve(base, installerCa) : undefined,
      insecure: merged.insecure === true ? true : undefined,
    } satisfies InstallerTarget;
  });
  const names = new Set<string>();
  for (const t of targets) {
    if (names.has(t.name)) throw usageError(`The inventory ${path} names "${t.name}" twice; give each installer its own name.`);
    names.add(t.name);
  }
  return targets;
}

/** Each role's built-in administrator. */
function defaultUser(role: InventoryRole | undefined): string {
  if (role === VCENTER_ROLE) return MGMT_DEFAULT_USER;
  return role === 'sddc-manager' ? SDDC_MANAGER_DEFAULT_USER : INSTALLER_DEFAULT_USER;
}

function bothTrusts(record: Record<string, unknown>): boolean {
  return record.insecure === true && record.installerCa !== undefined && record.installerCa !== null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `where`: "the defaults" or "installer N", the part of the inventory that holds the password. */
function passwordInInventory(path: string, where: string): Error {
  const holds = where === 'the defaults' ? 'hold' : 'holds';
  return usageError(`${where} of ${path} ${holds} a password; inventories name where passwords are (passwordEnv or passwordFile), never the passwords.`);
}
