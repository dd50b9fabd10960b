import type { Choice } from '../../depot/selection.js';
// The shapes of the status page's data: plain JSON, the page's JSON variant and what crosses the IPC channel.
import type { StatusEsxDepot } from './esx.js';

export type { StatusEsxDepot };

import type { ReleaseFileProblem, ReleaseState, ReleaseVerdict } from '../../depot/release-status.js';

/**
 * What `depotkit serve` shows at `/`: what the depot holds and whether it is complete, its certificate and
 * CA, and what to give the installer. Plain JSON (it crosses the IPC channel to the serving processes and is
 * the page's JSON variant); absolute times only, so that ages are computed when it is shown.
 */
export interface StatusData {
  /** Version of this shape; a field is only ever added. */
  format: 1;
  /** When the files were looked at. */
  checkedAt: string;
  /**
   * How presence was judged: `size` (each file's size against the catalog's, no hashing); `hashVerified`
   * files also match what `depotkit depot build` (or unpack, mirror) hashed and remembered, unchanged since.
   */
  check: 'size';
  summary: StatusSummary;
  catalog: StatusSource;
  manifest: StatusSource;
  /** `manifest`: releases and their bill of materials from the manifest; `catalog`: the catalog's product versions cut to four numbers. */
  grouping: 'manifest' | 'catalog';
  releases: StatusRelease[];
  /** The selection the depot records (a selective mirror or unpack made it), in words: what the page judges it on. */
  selection?: string;
  /** The same selection as the choices recorded, for a program (check judges the depot on them when not told otherwise). */
  selectionChoices?: Choice[];
  /** Catalog entries no release of the manifest names (older or newer versions the catalog also offers). */
  otherComponents: StatusComponent[];
  hcl: StatusHcl;
  /** vCenter upgrade metadata files (PROD/COMP/VCENTER/vmw/<uuid>/...), which the catalog does not name: how a mirror finds them. */
  upgradeMetadata: string[];
  /** The ESX depots for vSphere Lifecycle Manager under the root (umds-patch-store/, PROD/COMP/ESX_HOST/...). */
  esx: StatusEsxDepot[];
  /** The served certificate (the leaf); null over plain HTTP. */
  certificate: StatusCertificate | null;
  /** The served key's file can be read by its group or others: the sentence that says so and how to fix it. */
  keyExposed?: string;
  ca: StatusCa;
  access: StatusAccess;
}

export interface StatusSummary {
  /** Every file the catalog names (every one chosen, when the depot records a selection) is present with its size (and the catalog could be read). */
  complete: boolean;
  /** Distinct files the catalog names. */
  files: number;
  present: number;
  missing: number;
  wrongSize: number;
  unreadable: number;
  /** Files the depot's recorded selection did not choose that are not here: not counted missing. */
  leftOut: number;
  /** Of the present files, those whose content was hashed when placed and is unchanged since. */
  hashVerified: number;
  /** Bytes the catalog names, and of those the bytes present. */
  bytes: number;
  presentBytes: number;
}

export interface StatusSource {
  state: 'ok' | 'missing' | 'invalid';
  /** Why it is missing or cannot be used. */
  message?: string;
}

export interface StatusRelease {
  version: string;
  releaseDate?: string;
  minInstallerVersion?: string;
  /** Every file of its components is present with its size (and it names some). */
  complete: boolean;
  /**
   * As `depotkit depot verify` and `check` say it, from sizes: `complete`, `metadata-only` (none of the binaries
   * only it lists is here: a depot cut to other releases), `binaries-missing`, or `wrong-binaries` (a file under
   * one of its names has another size than it lists, e.g. another build).
   */
  state: ReleaseState;
  counts: ReleaseVerdict['counts'];
  /** Its files with a problem, each saying what it is (and which other build a file's size is, when one is). */
  problems: ReleaseFileProblem[];
  /** The release in one sentence. */
  message: string;
  components: StatusComponent[];
}

export interface StatusComponent {
  /** The component (the folder under PROD/COMP). */
  name: string;
  version: string;
  releaseDate?: string;
  /** False when the release names a component version the catalog does not have: no file to fetch. */
  inCatalog: boolean;
  files: StatusFile[];
}

/** `left-out`: not here, and not chosen by the selection the depot records. */
export type FileState = 'present' | 'missing' | 'wrong-size' | 'unreadable' | 'left-out';

export interface StatusFile {
  name: string;
  /** Web-root-relative path, as the installer fetches it below the depot URL. */
  path: string;
  /** Bytes, as the catalog says. */
  size: number;
  state: FileState;
  /** Bytes on disk, when the file is there with another size. */
  actualSize?: number;
  hashVerified: boolean;
}

export interface StatusHcl {
  state: 'ok' | 'missing' | 'invalid';
  /** When the vSAN HCL was last updated (its lastupdatedtime.json). */
  updated?: string;
  /** Older than this is reported as out of date by the installer. */
  maxAgeDays: number;
}

export interface StatusCertificate {
  subject: string;
  commonName?: string;
  issuer: string;
  dns: string[];
  ips: string[];
  notBefore: string;
  notAfter: string;
  /** SHA-256 of the DER, `AB:CD:...` as browsers and openssl show it. */
  sha256: string;
  isCa: boolean;
  selfSigned: boolean;
}

export interface StatusCa {
  /** The CA certificate to import into the installer's trust store; null when this server does not know it. */
  certificate: StatusCertificate | null;
  /** Its PEM text (public), served at /ca.pem. */
  pem?: string;
  /** Why it is not known. */
  unknownReason?: string;
}

export interface StatusAccess {
  /** The URL to give the installer: the folder that contains PROD/. */
  url: string;
  tls: boolean;
  auth: 'user' | 'htpasswd' | 'none';
  /** The Basic auth user, with a single user (an htpasswd file may hold several). */
  user?: string;
  /** Path prefixes left without credentials. */
  openPrefixes: string[];
  /** The path of the CA certificate's download on this server, when it serves one. */
  caPath?: string;
  commands: { check: string; installerDepot: string };
}

export interface StatusOptions {
  /** The served certificate, best followed by its chain (leaf first); absent over plain HTTP. */
  certPem?: string;
  /** The CA certificate, when it is not the last of the chain (or to name it explicitly). */
  caPem?: string;
  /** The URL the installer is given (scheme, host as the certificate names it, port, an optional prefix). */
  url: string;
  /** The same server by an address this host reaches, when the URL's name does not resolve here: the check command goes there, `--as-host` the name. */
  reachVia?: string;
  /** How the depot is protected: a single user's name, an htpasswd file, or nothing. */
  auth?: { user: string } | { htpasswd: true };
  openPrefixes?: string[];
  /** Where the CA certificate can be downloaded next to the page (serve: /ca.pem); none for a static copy that has no such file. */
  caPath?: string | null;
  /** The served key's file, which the page warns about while its group or others can read it. */
  keyFile?: string;
  now?: Date;
}
