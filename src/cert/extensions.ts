import { createRequire } from 'node:module';
import type Forge from 'node-forge';

/**
 * Certificate extensions read with node-forge's ASN.1 reader and OID names alone (a few ms to
 * load, where the whole of node-forge costs about 70 ms of CPU): inspecting and linting a
 * certificate, which `cert inspect` and `check` do at every run, build none.
 */
interface Asn1Parts {
  asn1: typeof Forge.asn1;
  oids: Record<string, string>;
  bytesToIP: (bytes: string) => string;
}

let parts: Asn1Parts | undefined;

/** forge's ASN.1 reader, OID names and IP formatting, loaded on first use. */
export function asn1Parts(): Asn1Parts {
  if (parts) return parts;
  // Spelt out each time: the bundles turn exactly this form into a require (scripts/build/relative-requires.ts).
  const asn1 = createRequire(import.meta.url)('node-forge/lib/asn1') as typeof Forge.asn1;
  const oids = createRequire(import.meta.url)('node-forge/lib/oids') as Record<string, string>;
  const util = createRequire(import.meta.url)('node-forge/lib/util') as { bytesToIP(bytes: string): string };
  return (parts = { asn1, oids, bytesToIP: (b) => util.bytesToIP(b) });
}

/** An extension as forge's certificate reader gives it: `name` plus the fields that depend on it. */
export type CertificateExtension = { id: string; name?: string; critical: boolean; value: string } & Record<string, unknown>;

const KEY_USAGE_BITS = ['digitalSignature', 'nonRepudiation', 'keyEncipherment', 'dataEncipherment', 'keyAgreement', 'keyCertSign', 'cRLSign', 'encipherOnly'];

/** keyUsage, basicConstraints and subjectAltName decoded as forge decodes them; other extensions kept as their raw value. */
function decode(e: CertificateExtension, { asn1, bytesToIP }: Asn1Parts): void {
  if (e.name === 'keyUsage') {
    const bits = asn1.fromDer(e.value).value as string;
    // The first byte counts the unused bits, which are zero anyway.
    const b2 = bits.length > 1 ? bits.charCodeAt(1) : 0;
    const b3 = bits.length > 2 ? bits.charCodeAt(2) : 0;
    KEY_USAGE_BITS.forEach((name, i) => (e[name] = (b2 & (0x80 >> i)) !== 0));
    e.decipherOnly = (b3 & 0x80) !== 0;
  } else if (e.name === 'basicConstraints') {
    const fields = asn1.fromDer(e.value).value as Forge.asn1.Asn1[];
    const first = fields[0];
    e.cA = first?.type === asn1.Type.BOOLEAN && (first.value as string).charCodeAt(0) !== 0;
    const pathLen = first?.type === asn1.Type.INTEGER ? first : fields[1];
    if (pathLen) e.pathLenConstraint = asn1.derToInteger(pathLen.value as string);
  } else if (e.name === 'subjectAltName' || e.name === 'issuerAltName') {
    e.altNames = (asn1.fromDer(e.value).value as Forge.asn1.Asn1[]).map((gn) => ({
      type: gn.type,
      value: gn.value,
      ...(gn.type === 7 ? { ip: bytesToIP(gn.value as string) } : {}),
    }));
  }
}

/** The extensions of a certificate's `[3]` field (a SEQUENCE of Extension). */
export function readExtensions(exts: Forge.asn1.Asn1): CertificateExtension[] {
  const p = asn1Parts();
  const { asn1, oids } = p;
  return (exts.value as Forge.asn1.Asn1[]).flatMap((seq) =>
    (seq.value as Forge.asn1.Asn1[]).map((ext) => {
      // extnID, critical BOOLEAN DEFAULT FALSE, extnValue OCTET STRING
      const [idField, second, third] = ext.value as Forge.asn1.Asn1[];
      const flagged = second!.type === asn1.Type.BOOLEAN;
      const id = asn1.derToOid(idField!.value as string);
      const e: CertificateExtension = {
        id,
        critical: flagged && (second!.value as string).charCodeAt(0) !== 0,
        value: (flagged ? third! : second!).value as string,
      };
      if (id in oids) {
        e.name = oids[id];
        decode(e, p);
      }
      return e;
    }),
  );
}
