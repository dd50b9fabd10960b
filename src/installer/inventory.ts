import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { INSTALLER_DEFAULT_USER } from '../constants.js';
import { describeFsError, usageError } from '../util/errors.js';
import { parseInstallerUrl } from './client.js';

/** One installer of a fleet and where its credentials come from. */
export interface InstallerTarget {
  name: string;
  url: string;
  user: string;
  /** Environment variable holding the password. */
  passwordEnv?: string;
  /** File whose first line is the password (absolute). */
  passwordFile?: string;
  /** The installer's certificate or CA (absolute path), to verify its HTTPS. */
  installerCa?: string;
  insecure?: boolean;
}

const KEYS = ['name', 'url', 'user', 'passwordEnv', 'passwordFile', 'installerCa', 'insecure'] as const;

/**
 * Reads an inventory (YAML or JSON):
 *
 *     defaults: { user: admin@local, passwordEnv: INSTALLER_PASSWORD, installerCa: ca.pem }
 *     installers:
 *       - { name: site-a, url: https://installer-a.lab, passwordFile: secrets/a }
 *
 * A bare list of installers works too. Relative paths are taken from the
 * inventory's folder. Passwords themselves never go in the inventory.
 */
export async function loadInventory(path: string): Promise<InstallerTarget[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw describeFsError(err, path);
  }
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (err) {
    throw usageError(`The inventory ${path} is neither YAML nor JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  const base = dirname(resolve(path));
  const root = Array.isArray(data) ? { installers: data } : data;
  if (!isRecord(root) || !Array.isArray(root.installers)) throw usageError(`The inventory ${path} needs a list "installers" (or is itself that list).`);
  const defaults = root.defaults === undefined ? {} : root.defaults;
  if (!isRecord(defaults)) throw usageError(`"defaults" in ${path} must be a mapping.`);
  if ('password' in defaults) throw passwordInInventory(path, 'defaults');
  if (bothTrusts(defaults)) throw usageError(`"defaults" in ${path} give installerCa and insecure: give one, not both.`);
  const targets = root.installers.map((entry: unknown, index: number) => {
    const where = `installer ${index + 1} of ${path}`;
    if (typeof entry === 'string') entry = { url: entry };
    if (!isRecord(entry)) throw usageError(`${where} must be a mapping with at least a url.`);
    if ('password' in entry) throw passwordInInventory(path, where);
    for (const key of Object.keys(entry)) {
      if (!(KEYS as readonly string[]).includes(key)) throw usageError(`${where} has an unknown key "${key}"; known keys: ${KEYS.join(', ')}.`);
    }
    if (bothTrusts(entry)) throw usageError(`${where} gives installerCa and insecure: give one, not both.`);
    // An entry's own choice of trust replaces the default's other one.
    const inherited = { ...defaults };
    if (entry.insecure === true) delete inherited.installerCa;
    if (entry.installerCa !== undefined) delete inherited.insecure;
    const merged: Record<string, unknown> = { ...inherited, ...entry };
    const str = (key: string): string | undefined => {
      const value = merged[key];
      if (value === undefined || value === null) return undefined;
      if (typeof value !== 'string' || value.trim() === '') throw usageError(`${where}: "${key}" must be a non-empty string.`);
      return value.trim();
    };
    const url = str('url');
    if (!url) throw usageError(`${where} has no url.`);
    const origin = parseInstallerUrl(url);
    if (merged.insecure !== undefined && typeof merged.insecure !== 'boolean') throw usageError(`${where}: "insecure" must be true or false.`);
    const passwordFile = str('passwordFile');
    const installerCa = str('installerCa');
    return {
      name: str('name') ?? origin.host,
      url: origin.origin,
      user: str('user') ?? INSTALLER_DEFAULT_USER,
      passwordEnv: str('passwordEnv'),
      passwordFile: passwordFile ? resolve(base, passwordFile) : undefined,
      installerCa: installerCa ? resolve(base, installerCa) : undefined,
      insecure: merged.insecure === true ? true : undefined,
    } satisfies InstallerTarget;
  });
  if (targets.length === 0) throw usageError(`The inventory ${path} lists no installers.`);
  const names = new Set<string>();
  for (const t of targets) {
    if (names.has(t.name)) throw usageError(`The inventory ${path} names "${t.name}" twice; give each installer its own name.`);
    names.add(t.name);
  }
  return targets;
}

function bothTrusts(record: Record<string, unknown>): boolean {
  return record.insecure === true && record.installerCa !== undefined && record.installerCa !== null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function passwordInInventory(path: string, where: string): Error {
  return usageError(`${where} of ${path} holds a password; inventories name where passwords are (passwordEnv or passwordFile), never the passwords.`);
}
