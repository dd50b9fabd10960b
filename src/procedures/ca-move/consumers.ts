import { APPLIANCE_ROLES } from '../../constants.js';
import { InstallerClient, InstallerConnectionError, parseInstallerUrl, runFleet, type InstallerTarget } from '../../installer/index.js';
import { readCaPems } from '../../pki/index.js';
import { DepotkitError, EXIT, usageError } from '../../util/errors.js';
import { readSecret } from '../../util/secrets.js';
import type { CaMoveOptions, ConsumerRow } from './types.js';

/** The expected role an inventory entry may carry, as appliance-info answers it. */
function expectedRole(target: InstallerTarget): string | undefined {
  const role = (target as InstallerTarget & { role?: string }).role;
  if (role === undefined) return undefined;
  return role === 'sddc-manager' ? APPLIANCE_ROLES.manager : role === 'installer' ? APPLIANCE_ROLES.installer : role;
}

/**
 * Runs `task` on every consumer with a client logged in (revoked afterwards),
 * each row naming the consumer's role and version as appliance-info gives
 * them; a consumer that answers another role than its entry expects fails
 * its row, and one that cannot be reached is marked so.
 */
export async function onEveryConsumer<T>(
  targets: InstallerTarget[],
  opts: Pick<CaMoveOptions, 'concurrency' | 'timeoutMs' | 'passwords'>,
  task: (client: InstallerClient, target: InstallerTarget) => Promise<{ ok: boolean; result: T }>,
): Promise<Array<ConsumerRow<T>>> {
  const seen = new Map<string, { role?: string; version?: string; unreachable?: boolean }>();
  const rows = await runFleet(targets, opts.concurrency, async (target) => {
    const facts: { role?: string; version?: string; unreachable?: boolean } = {};
    seen.set(target.name, facts);
    const password = await passwordOf(target, opts.passwords);
    const caPems = target.installerCa ? await readCaPems([target.installerCa]) : undefined;
    const client = new InstallerClient(parseInstallerUrl(target.url), {
      url: target.url,
      user: target.user,
      password,
      trust: { caPems, insecure: target.insecure },
      timeoutMs: opts.timeoutMs,
      retries: 1,
    });
    try {
      await client.login();
      const info = await client.applianceInfo();
      Object.assign(facts, { role: info.role, version: info.version });
      const expected = expectedRole(target);
      if (expected && info.role !== expected) {
        throw new DepotkitError(`${target.name} answers as ${info.role}, not the ${expected} the inventory expects.`, EXIT.problems);
      }
      return await task(client, target);
    } catch (err) {
      if (err instanceof InstallerConnectionError) facts.unreachable = true;
      throw err;
    } finally {
      await client.close();
    }
  });
  return rows.map((row) => {
    const facts = seen.get(row.name) ?? {};
    return {
      ...row,
      ...(facts.role ? { role: facts.role } : {}),
      ...(facts.version ? { version: facts.version } : {}),
      ...(facts.unreachable ? { unreachable: true } : {}),
    };
  });
}

function passwordOf(target: InstallerTarget, given: ReadonlyMap<string, string> | undefined): Promise<string> {
  if (target.passwordFile) return readSecret({ file: target.passwordFile }, 'password');
  if (target.passwordEnv) return readSecret({ env: target.passwordEnv }, 'password');
  const password = given?.get(target.user);
  if (password === undefined) return Promise.reject(usageError(`No password source for ${target.user} on ${target.name}.`));
  return Promise.resolve(password);
}
