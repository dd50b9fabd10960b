/** The validators of one file version. */
export interface Validators {
  /** Strong entity tag, quoted. */
  etag: string;
  /** HTTP date of the modification time, whole seconds. */
  lastModified: string;
  mtimeSeconds: number;
}

export function validatorsOf(size: number, mtimeMs: number): Validators {
  const mtimeSeconds = Math.floor(mtimeMs / 1000);
  // Same shape as nginx's: modification time and size in hex; a file replaced in place gets a new tag.
  return { etag: `"${mtimeSeconds.toString(16)}-${size.toString(16)}"`, lastModified: new Date(mtimeSeconds * 1000).toUTCString(), mtimeSeconds };
}

function etagList(header: string): string[] {
  return header.split(',').map((t) => t.trim().replace(/^W\//, ''));
}

/**
 * RFC 9110 §13.1.1 and §13.1.4, the first steps of §13.2.2: If-Match by strong comparison (`*` matches any
 * file there is), else If-Unmodified-Since (a date that cannot be read is ignored). True means answer 412;
 * checked before the freshness (304) and before Range.
 */
export function preconditionFailed(v: Validators, ifMatch: string | undefined, ifUnmodifiedSince: string | undefined): boolean {
  if (ifMatch !== undefined) {
    const tags = ifMatch.split(',').map((t) => t.trim());
    // A weak tag (W/"...") never matches strongly.
    return !(tags.includes('*') || tags.includes(v.etag));
  }
  if (ifUnmodifiedSince !== undefined) {
    const since = Date.parse(ifUnmodifiedSince);
    return !Number.isNaN(since) && v.mtimeSeconds * 1000 > since;
  }
  return false;
}

/** RFC 9110 §13.2.2: If-None-Match wins over If-Modified-Since. True means answer 304. */
export function notModified(v: Validators, ifNoneMatch: string | undefined, ifModifiedSince: string | undefined): boolean {
  if (ifNoneMatch !== undefined) {
    const tags = etagList(ifNoneMatch);
    return tags.includes('*') || tags.includes(v.etag);
  }
  if (ifModifiedSince !== undefined) {
    const since = Date.parse(ifModifiedSince);
    return !Number.isNaN(since) && v.mtimeSeconds * 1000 <= since;
  }
  return false;
}

/** If-Range: the range applies only if the client's validator still names this version (strong comparison). */
export function ifRangeMatches(v: Validators, ifRange: string | undefined): boolean {
  if (ifRange === undefined) return true;
  const value = ifRange.trim();
  if (value.startsWith('"')) return value === v.etag;
  if (value.startsWith('W/')) return false;
  const date = Date.parse(value);
  return !Number.isNaN(date) && date === v.mtimeSeconds * 1000;
}
