import { KNOWN_COMPONENTS } from '../constants.js';
import { levenshtein } from '../util/text.js';

const squash = (name: string) => name.toUpperCase().replace(/[^A-Z0-9]/g, '');

/**
 * The known component a folder name was probably meant to be (`NSXT_MANAGER`
 * → `NSX_T_MANAGER`, `vcenter` → `VCENTER`), or undefined when it is not close
 * to any.
 */
export function suggestComponent(name: string, known: readonly string[] = KNOWN_COMPONENTS): string | undefined {
  if (known.includes(name)) return undefined;
  const squashed = squash(name);
  const exact = known.find((k) => squash(k) === squashed);
  if (exact) return exact;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = levenshtein(squashed, squash(candidate));
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  // Short names (VRA, VRO) are one letter apart from each other: only allow a
  // typo that is small against the name's length.
  return bestDistance <= Math.max(1, Math.floor(squashed.length / 5)) ? best : undefined;
}
