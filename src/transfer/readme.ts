import { PACK_FILE_SUMS_FILE, PACK_MANIFEST_FILE, PACK_PART_DIGITS, PACK_PART_SUFFIX, PACK_SUMS_FILE } from '../constants.js';
import type { PackManifest } from './format.js';

// The pack README is a document for people at the other site, who run depotkit's command line: this
// file's README_COMMANDS is the pack README's command-line table, the one place it spells flags.
const README_COMMANDS = {
  unpack: 'depotkit depot unpack /media/disc1 /media/disc2 ... --out /srv/depot --expect "<seal>"',
} as const;

/** The pack's README.txt: how to check and open it with standard tools, without depotkit. */
export function packReadme(manifest: PackManifest): string {
  const parts = manifest.files.filter((f) => f.pieces.length > 1).length;
  const firstPart = `${PACK_PART_SUFFIX}${'1'.padStart(PACK_PART_DIGITS, '0')}`;
  return `A depot pack made by depotkit (${manifest.packId}, ${manifest.created}).
${manifest.volumes.length} volumes, ${manifest.files.length} files${manifest.since ? ', a delta: only what the older depot lacks or has different' : ''}.

With depotkit, on the depot host (volumes may sit in several folders, one per disc or drive):

    ${README_COMMANDS.unpack}

It checks every volume and every file, places each file through a temporary name, resumes
after a missing or damaged volume is supplied, and ends with the checks of depot verify.
The seal ("catalog ... manifest ...") was printed where the pack was made and travels apart
from these media: with it, media whose catalog and binaries were both replaced are refused.

With standard tools only:

    sha256sum -c ${PACK_SUMS_FILE}                 # every volume, the manifest, this file
    mkdir depot && for v in depot-*.tar; do tar -xf "$v" -C depot; done
    cd depot
    # ${parts} file(s) are split across volumes, as numbered parts: join each one.
    find . -name '*${firstPart}' | while read -r p; do
      f=\${p%${firstPart}}; cat "$f"${PACK_PART_SUFFIX}* > "$f" && rm "$f"${PACK_PART_SUFFIX}*
    done
    sha256sum -c ../${PACK_FILE_SUMS_FILE}        # every file of the depot carried

Volumes are POSIX (ustar) tar archives: \`tar -tvf depot-001-of-...tar\` lists one.
${PACK_MANIFEST_FILE} says which volume holds which bytes of which file, with their SHA-256.
`;
}
