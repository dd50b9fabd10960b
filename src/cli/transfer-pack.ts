import { withOptions } from './option-table.js';
import { type Command } from 'commander';
import { PACK_MANIFEST_FILE, PACK_SUMS_FILE } from '../constants.js';
import type { PackReport } from '../transfer/pack.js';
import { EXIT } from '../util/errors.js';
import { formatBytes, withByteProgress } from '../util/progress.js';
import { plural } from '../util/text.js';
import { warnIfExposed } from './options.js';
import { printJson, printLines } from './output.js';
import { formatEsxProducts, formatSelection, listed, selectOptionsOf, transfer } from './transfer-shared.js';

/** The private key that signs a pack's manifest; a key others can read is said so, as for password files. */
async function readSigningKey(file: string | undefined): Promise<string | undefined> {
  if (!file) return undefined;
  await warnIfExposed(file);
  const { readPemFile } = await import('../cert/pem.js');
  return (await readPemFile(file, ['PRIVATE KEY', 'EC PRIVATE KEY'])).join('');
}

/** `depot pack`: a depot (or what an older one lacks) as volumes, with the manifest, the checksum lists and the seal. */
export function registerPack(depot: Command): void {
  const command = withOptions(
    depot
      .command('pack <depot-dir>')
      .description('write a depot (or what an older one lacks) as volumes for media with size limits, with a manifest and SHA256SUMS'),
  );
  command.action(
    async (
      dir: string,
      opts: {
        out: string;
        volumeSize: number;
        since?: string;
        signingKey?: string;
        sealOut?: string;
        esx: boolean;
        esxOnly?: boolean;
        product: string[];
        productVersion: string[];
        force?: boolean;
        json?: boolean;
        release: string[];
        component: string[];
        imageType?: string;
      },
    ) => {
      const signingKeyPem = await readSigningKey(opts.signingKey);
      const { packDepot } = await transfer();
      const report = await withByteProgress('packing', !opts.json, (hooks) =>
        packDepot({
          depot: dir,
          out: opts.out,
          volumeSize: opts.volumeSize,
          since: opts.since,
          force: opts.force,
          signingKeyPem,
          sealFile: opts.sealOut,
          select: selectOptionsOf(opts),
          esx: opts.esx,
          esxOnly: opts.esxOnly,
          esxSelect: { products: opts.product, versions: opts.productVersion },
          ...hooks,
        }),
      );
      if (opts.json) printJson(report);
      else printLines(formatPackReport(report));
      process.exitCode = report.ok ? EXIT.ok : EXIT.problems;
    },
  );
}

export function formatPackReport(r: PackReport): string[] {
  const lines = [
    `Packed ${plural(r.files, 'file')} (${formatBytes(r.bytes)}) from ${r.depot} into ${r.volumes.length} volume${r.volumes.length === 1 ? '' : 's'} of at most ${formatBytes(r.volumeSize)} in ${r.out}.`,
  ];
  lines.push(...formatSelection(r.selection));
  const esxOnly = r.esxSha256 !== undefined;
  if (r.delta)
    lines.push(
      `A delta${esxOnly ? ' of the ESX depots alone' : ''} against ${r.since?.source}: ${plural(r.unchanged.files, 'file')} (${formatBytes(r.unchanged.bytes)}) it already has ${r.unchanged.files === 1 ? 'was' : 'were'} left out; ${r.removed.length} of its files ${r.removed.length === 1 ? 'is' : 'are'} no longer in ${esxOnly ? 'these ESX depots' : 'this depot'}.`,
    );
  for (const v of r.volumes) lines.push(`  ${v.name}  ${formatBytes(v.size)}  ${v.sha256}`);
  lines.push(
    ...listed(
      'Missing from the depot (not packed)',
      r.missing.map((m) => m.path),
    ),
  );
  lines.push(
    ...listed(
      'Wrong size (not packed)',
      r.wrongSize.map((w) => `${w.path} is ${w.actualSize} bytes, the catalog says ${w.size}`),
    ),
  );
  lines.push(
    ...listed(
      'Wrong content (packed, flagged: unpack will not place them)',
      r.wrongChecksum.map((w) => `${w.path} SHA-256 ${w.actual}`),
    ),
  );
  if (r.strays.length)
    lines.push(
      `${plural(r.strays.length, 'file')} in component folders that the catalog does not name ${r.strays.length === 1 ? 'was' : 'were'} not packed (depotkit depot prune lists them).`,
    );
  lines.push(...formatPackEsx(r.esx));
  lines.push(`Check on any machine: cd ${r.out} && sha256sum -c ${PACK_SUMS_FILE}. Carry every volume with ${PACK_MANIFEST_FILE} and ${PACK_SUMS_FILE}.`);
  if (r.signature) lines.push(`Signed: ${r.signature.path} (key ${r.signature.signerSpkiSha256}); unpack checks it with --pack-signing-cert.`);
  lines.push(`Seal: ${r.seal}`);
  lines.push(
    `Carry the seal apart from the media (a change ticket, a phone call${r.sealFile ? `; written to ${r.sealFile}` : ''}): unpack --expect refuses media that do not match it.`,
  );
  lines.push(okLine(r));
  return lines;
}

function okLine(r: PackReport): string {
  if (r.esxSha256 !== undefined)
    return r.ok
      ? 'OK: every VIB the ESX metadata lists that the depot holds was packed with the right content (the ESX depots alone, not PROD/).'
      : 'INCOMPLETE: the ESX depots have VIBs nothing vouches for or broken links (see above); the pack carries the rest.';
  return r.ok
    ? `OK: every binary the catalog names${r.esx ? ' and every VIB the ESX metadata lists that the depot holds' : ''} was packed with the right content.`
    : 'INCOMPLETE: the depot is missing binaries or has wrong ones (see above); the pack carries the rest.';
}

function formatPackEsx(esx: PackReport['esx']): string[] {
  if (!esx) return [];
  const lines = [`ESX depots carried: ${esx.depots.join(', ')}; every VIB held to the SHA-256 its metadata states.`, ...formatEsxProducts(esx.products)];
  if (esx.selection)
    lines.push(
      `ESX products chosen: ${esx.selection.chosen.join(', ')}; left out: ${plural(esx.selection.leftOut.vibs, 'VIB')} (${formatBytes(esx.selection.leftOut.bytes)}) that only other products list.`,
    );
  lines.push(
    ...listed(
      'ESX VIBs of another size than their metadata states (not packed)',
      esx.wrongSize.map((w) => `${w.path} is ${w.actualSize} bytes, the metadata says ${w.size}`),
    ),
  );
  lines.push(...listed('ESX VIBs whose metadata states no SHA-256 (not packed: nothing vouches for them)', esx.noChecksum));
  lines.push(...esx.findings.map((f) => `ERROR ${f.message}`));
  if (esx.missing.length)
    lines.push(`${plural(esx.missing.length, 'VIB')} the ESX metadata lists ${esx.missing.length === 1 ? 'is' : 'are'} not in the depot (not packed).`);
  if (esx.unlisted.length)
    lines.push(
      `${plural(esx.unlisted.length, 'VIB file')} that no ESX metadata lists ${esx.unlisted.length === 1 ? 'was' : 'were'} not packed (depotkit depot prune lists them).`,
    );
  return lines;
}
