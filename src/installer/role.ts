import { CONSUMER_ROLES, VCENTER_ROLE, type ConsumerRole } from '../constants.js';
import { DepotkitError, EXIT } from '../util/errors.js';
import type { InstallerTarget } from './inventory.js';
import type { ApplianceInfo } from './wire.js';

const WORDS: Record<ConsumerRole, string> = { installer: 'an installer', 'sddc-manager': 'an SDDC Manager' };

/** What a consumer is, in words, from the role appliance-info answers. */
export function roleWords(applianceRole: string): string {
  const role = (Object.keys(CONSUMER_ROLES) as ConsumerRole[]).find((r) => CONSUMER_ROLES[r] === applianceRole);
  return role ? WORDS[role] : `a "${applianceRole}"`;
}

/**
 * Refuses a consumer that answers another role than the inventory expects:
 * the same API on the wrong appliance changes the wrong system's depot.
 */
export function checkRole(target: InstallerTarget, appliance: ApplianceInfo): void {
  if (target.role === undefined) return;
  if (target.role === VCENTER_ROLE) throw notOnVcenter(target);
  const expected = CONSUMER_ROLES[target.role];
  if (appliance.role === expected) return;
  throw new DepotkitError(
    `${target.name} is expected to be ${WORDS[target.role]} (role ${expected}) but answers role ${appliance.role} (${roleWords(appliance.role)}, version ${appliance.version}): nothing was changed on it.`,
    EXIT.problems,
    target.source === 'options'
      ? 'Give the `role` the consumer at that URL has, or the URL of the `installer` you meant.'
      : 'Correct the "role" of this entry in the inventory, or its URL.',
  );
}

/** A vCenter given to a task of the depot API's consumers: it has another API, and nothing is sent to it. */
export function notOnVcenter(target: InstallerTarget): DepotkitError {
  return new DepotkitError(
    `${target.name} is a vCenter (role ${VCENTER_ROLE}): this works on installers and SDDC Managers; nothing was sent to it.`,
    EXIT.problems,
    'A vCenter takes the ESX depot: `connectVcenterDepot`.',
  );
}
