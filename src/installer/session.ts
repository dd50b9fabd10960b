import { INSTALLER_DEFAULT_USER, SDDC_MANAGER_DEFAULT_USER, VCENTER_ROLE, type ConsumerRole } from '../constants.js';
import { readCaPems } from '../cert/trust-source.js';
import { usageError } from '../util/errors.js';
import { exposedFileWarning } from '../util/fs.js';
import { readSecret, resolvePassword, type SecretPrompt } from '../util/secrets.js';
import { InstallerClient, parseInstallerUrl } from './client.js';
import { runFleet, type ConsumerIdentity, type FleetRow } from './fleet.js';
import { checkRole, notOnVcenter } from './role.js';
import type { ApplianceInfo } from './wire.js';
import type { InstallerTarget } from './inventory.js';

/** Where the installers are: one by URL, or a fleet from an inventory; what the command line adds to its entries. */
export interface TargetSpec {
  installer?: string;
  inventory?: string;
  /** The role the one installer must answer (the inventory gives each entry's own). */
  role?: ConsumerRole;
  /** The user of the one installer (the inventory's entries name their own); by default the administrator of `role`. */
  user?: string;
  passwordFile?: string;
  passwordEnv?: string;
  installerCa?: string;
  insecure?: boolean;
}

/**
 * The installers to work on. Command-line sources fill in what an inventory
 * entry leaves open (its own password source and trust win); the password
 * source given with them is read here, before any work: missing, it is bad
 * input, not a failed installer.
 */
export async function resolveTargets(spec: TargetSpec): Promise<InstallerTarget[]> {
  if (!!spec.installer === !!spec.inventory) throw usageError('Give one installer with `installer` URL, or a fleet with `inventory` FILE.');
  if (spec.installerCa && spec.insecure) throw usageError('Give `installerCa` or `insecure`, not both.');
  if (spec.inventory && spec.role)
    throw usageError('An inventory gives each consumer its own role: put `role` in its entries (or its defaults), not beside it.');
  if (spec.passwordFile !== undefined || spec.passwordEnv !== undefined) await readSecret({ file: spec.passwordFile, env: spec.passwordEnv }, 'password');
  if (spec.installer) {
    const origin = parseInstallerUrl(spec.installer);
    return [
      {
        name: origin.host,
        url: origin.origin,
        ...(spec.role ? { role: spec.role } : {}),
        user: spec.user ?? (spec.role === 'sddc-manager' ? SDDC_MANAGER_DEFAULT_USER : INSTALLER_DEFAULT_USER),
        source: 'options',
        passwordFile: spec.passwordFile,
        passwordEnv: spec.passwordEnv,
        installerCa: spec.installerCa,
        insecure: spec.insecure,
      },
    ];
  }
  // The inventory's reader (its schema, YAML) loads only for a fleet: one installer's command pays nothing for it.
  const { loadInventory } = await import('./inventory.js');
  return (await loadInventory(spec.inventory!)).map((t) => ({
    ...t,
    ...(t.passwordFile || t.passwordEnv ? {} : { passwordFile: spec.passwordFile, passwordEnv: spec.passwordEnv }),
    installerCa: t.installerCa ?? (t.insecure ? undefined : spec.installerCa),
    insecure: t.insecure ?? (t.installerCa ? undefined : spec.insecure),
  }));
}

/**
 * What a fleet's password files risk (anyone who can read one has the
 * password), for the caller to show: one sentence per file, each file once.
 */
export async function passwordFileWarnings(targets: InstallerTarget[]): Promise<string[]> {
  const files = new Set(targets.map((t) => t.passwordFile).filter((f): f is string => f !== undefined));
  return (await Promise.all([...files].map((f) => exposedFileWarning(f)))).filter((w): w is string => w !== undefined);
}

/**
 * The passwords of the users whose consumers name no file or variable, asked
 * through `prompt` once per user, before any consumer is worked on (through
 * the one resolver, util/secrets.ts); without a prompt such a user is refused.
 */
export async function promptedPasswords(targets: InstallerTarget[], prompt?: SecretPrompt): Promise<Map<string, string>> {
  const seen = new Map<string, string>();
  for (const t of targets) if (!t.passwordFile && !t.passwordEnv && !seen.has(t.user)) seen.set(t.user, t.name);
  const passwords = new Map<string, string>();
  for (const [user, installer] of seen) {
    if (prompt === undefined)
      throw usageError(
        `No password source for ${user} on ${installer}.`,
        targets.some((t) => t.source !== 'options')
          ? 'Add passwordEnv or passwordFile to the inventory, or give `passwordFile`.'
          : 'Give `passwordFile` or `passwordEnv`.',
      );
    passwords.set(user, await resolvePassword({}, `password of ${user}`, prompt, `Password of ${user}`));
  }
  return passwords;
}

/**
 * A command's task on a vCenter of the inventory, with its password: it fills `seen` with the role
 * and version its row names. Given by a floor that may use the vCenter client.
 */
export type VcenterTask<T> = (target: InstallerTarget, seen: ConsumerIdentity, password: string) => Promise<{ ok: boolean; result: T }>;

export interface FleetSessionOptions {
  /** Installers worked on at once. */
  concurrency: number;
  /** Timeout of each API request. */
  timeoutMs: number;
  /** Asks for the password of a user whose installers name no file or variable (on a terminal, say); without it such a user is refused. */
  prompt?: SecretPrompt;
}

/**
 * Runs a task on each installer with a client logged in, revoked afterwards.
 * Passwords come from each installer's file or variable (a missing one fails
 * only its own row), or from `passwords`. `abort()` revokes every open
 * session, log-ins under way included: what an interrupted command calls.
 */
export class FleetSession {
  private readonly open = new Set<InstallerClient>();
  private clients: ConsumerClients;

  constructor(
    readonly targets: InstallerTarget[],
    private readonly opts: FleetSessionOptions,
  ) {
    if (!Number.isInteger(opts.concurrency) || opts.concurrency < 1) throw usageError('The concurrency must be at least 1.');
    this.clients = new ConsumerClients(opts);
  }

  /**
   * Asks for the passwords no file or variable gives (promptedPasswords),
   * before run() and before anything else is drawn on the terminal; returns
   * what the password files risk, for the caller to show.
   */
  async resolvePasswords(): Promise<string[]> {
    const passwords = await promptedPasswords(this.targets, this.opts.prompt);
    this.clients = new ConsumerClients({ timeoutMs: this.opts.timeoutMs, passwords });
    return passwordFileWarnings(this.targets);
  }

  /**
   * Runs `task` on each consumer once it is logged in and has said what it is
   * (appliance-info: role and version, in the row); a consumer answering
   * another role than its entry expects fails its row before the task runs.
   */
  run<T>(
    task: (client: InstallerClient, target: InstallerTarget, appliance: ApplianceInfo) => Promise<{ ok: boolean; result: T }>,
    onRow?: (row: FleetRow<T>) => void,
    vcenters?: VcenterTask<T>,
  ): Promise<Array<FleetRow<T>>> {
    return runFleet(
      this.targets,
      this.opts.concurrency,
      async (target, seen) => {
        // A vCenter has another API: its own task when the command has one, else its row says so and nothing is sent.
        if (target.role === VCENTER_ROLE) {
          if (!vcenters) throw notOnVcenter(target);
          return vcenters(target, seen, await this.clients.passwordOf(target));
        }
        // Registered before it logs in, so that an abort during the log-in revokes that session too.
        const client = await this.clients.client(target);
        this.open.add(client);
        try {
          await client.login();
          const appliance = await client.applianceInfo();
          seen.role = appliance.role;
          seen.version = appliance.version;
          checkRole(target, appliance);
          return await task(client, target, appliance);
        } finally {
          this.open.delete(client);
          await client.close();
        }
      },
      onRow,
    );
  }

  /** Revokes every open session at once, without waiting for the requests under way. */
  async abort(): Promise<void> {
    await Promise.allSettled([...this.open].map((c) => c.close({ abort: true })));
  }
}

function cached<T>(cache: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  let value = cache.get(key);
  if (!value) {
    value = make();
    cache.set(key, value);
  }
  return value;
}

export interface ConsumerClientOptions {
  /** Timeout of each API request. */
  timeoutMs: number;
  /** Passwords, by user name, of the consumers that name no file or variable. */
  passwords?: ReadonlyMap<string, string>;
  /** Retries of a request that failed on the network (the client's default when absent). */
  retries?: number;
}

/**
 * Makes each consumer's client, not yet logged in, with its password and the CA
 * it is trusted by; a password file or CA file named by many consumers is read once.
 */
export class ConsumerClients {
  private readonly files = new Map<string, Promise<string>>();
  private readonly trust = new Map<string, Promise<string[]>>();

  constructor(private readonly opts: ConsumerClientOptions) {}

  async client(target: InstallerTarget): Promise<InstallerClient> {
    const password = await this.passwordOf(target);
    const caPems = target.installerCa ? await cached(this.trust, target.installerCa, () => readCaPems([target.installerCa!])) : undefined;
    return new InstallerClient(parseInstallerUrl(target.url), {
      url: target.url,
      user: target.user,
      password,
      trust: { caPems, insecure: target.insecure },
      timeoutMs: this.opts.timeoutMs,
      ...(this.opts.retries !== undefined ? { retries: this.opts.retries } : {}),
    });
  }

  /** The consumer's password: from its file (read once) or variable, else from the passwords given. */
  passwordOf(t: InstallerTarget): Promise<string> {
    if (t.passwordFile) return cached(this.files, t.passwordFile, () => readSecret({ file: t.passwordFile }, 'password'));
    if (t.passwordEnv) return readSecret({ env: t.passwordEnv }, 'password');
    const given = this.opts.passwords?.get(t.user);
    if (given === undefined) return Promise.reject(usageError(`No password source for ${t.user} on ${t.name}.`));
    return Promise.resolve(given);
  }
}
