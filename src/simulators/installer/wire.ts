/**
 * The installer API's requests and answers as the simulator reads and writes them, written from
 * the published API documents (9.0.2.0, 9.1.0.0 and the 9.1.1 additions) and docs/interfaces.md,
 * on purpose not from the client's code: a client that misreads the wire must meet here what a
 * real installer answers, not its own mistake mirrored.
 */
import { isObject } from '../../util/json.js';

export { isObject };

/** `Error` of the API documents: the body of every refusal (the simulator leaves out `label`, `notifications` and `remediationUrl`). */
export interface ErrorBody {
  arguments: string[];
  causes: Array<{ message: string; type: string }>;
  context: Record<string, string>;
  errorCode: string;
  errorType: string;
  label?: string;
  message: string;
  nestedErrors: ErrorBody[];
  referenceToken: string;
  remediationMessage?: string;
  remediationUrl?: string;
}

/** `TrustedCertificate`. */
export interface TrustedCertificateView {
  alias: string;
  certificate: string;
}

/** `DepotSettings` as GET answers it: never the password. */
export interface DepotSettingsView {
  offlineAccount?: { username?: string; status: string; message: string };
  depotConfiguration?: { isOfflineDepot: true; hostname: string; port: number; url?: string };
}

/** `TokenCreationSpec` with a user name and password (the API key and ID token are not simulated). */
export function readTokenRequest(body: unknown): { username: string; password: string } | undefined {
  if (!isObject(body) || typeof body.username !== 'string' || typeof body.password !== 'string') return undefined;
  return { username: body.username, password: body.password };
}

/**
 * The refresh token id of a token operation: the spec's body is a JSON string (the id quoted);
 * the vendor's PowerShell module sends the id raw. Empty when there is none.
 */
export function readRefreshId(text: string): string {
  const body = text.trim();
  if (body.length >= 2 && body.startsWith('"') && body.endsWith('"')) {
    try {
      const id: unknown = JSON.parse(body);
      if (typeof id === 'string') return id.trim();
    } catch {
      // Quotes that are not a JSON string: the raw text is the id.
    }
  }
  return body;
}

/** `TrustedCertificateSpec`: the certificate (checked by the store) and the deprecated usage type, absent meaning outbound. */
export function readTrustedCertificateSpec(body: unknown): { certificate: unknown; usage: unknown } | undefined {
  if (!isObject(body)) return undefined;
  return { certificate: body.certificate, usage: body.certificateUsageType };
}

/** `BundleUpdateSpec`: does it ask for a download, now or at a scheduled time? */
export function asksForDownload(body: unknown): boolean {
  const spec = isObject(body) ? body.bundleDownloadSpec : undefined;
  return isObject(spec) && (spec.downloadNow === true || spec.scheduledTimestamp !== undefined);
}

/** `{ elements, pageMetadata }`: a list as the installer answers lists, everything on page 0. */
export function page<T>(elements: T[]): { elements: T[]; pageMetadata: { pageNumber: number; pageSize: number; totalElements: number; totalPages: number } } {
  return { elements, pageMetadata: { pageNumber: 0, pageSize: elements.length, totalElements: elements.length, totalPages: 1 } };
}
