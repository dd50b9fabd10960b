import { posix } from 'node:path';
import { type DepotUrl, parseDepotUrl } from '../../util/depot-url.js';
import { usageError } from '../../util/errors.js';

/** Where the download token goes in an index URL: the vendor's online depots carry it as a folder of the path. */
export const TOKEN_PLACEHOLDER = '{token}';

/** An ESX depot's root index as a URL: the folder fetched from, and the index's name in it. */
export interface EsxIndexUrl {
  /** The URL to fetch from: the folder of the root index, with the token in place. Never shown. */
  depot: DepotUrl;
  /** The root index's name in that folder. */
  index: string;
  /** The URL as given, with {@link TOKEN_PLACEHOLDER} where the token goes: the only form any message or report shows. */
  shown: string;
}

/**
 * Reads the URL of a root index. Where it says {@link TOKEN_PLACEHOLDER}, the token is put into the
 * path (percent-encoded); only the URL as given is ever shown, so the token stays out of every
 * message, report and file.
 */
export function parseEsxIndexUrl(text: string, token: string | undefined): EsxIndexUrl {
  const wantsToken = text.includes(TOKEN_PLACEHOLDER);
  if (wantsToken && token === undefined)
    throw usageError(
      `${text} has a ${TOKEN_PLACEHOLDER} in its path and no token was given.`,
      'Give the download token in a file (`tokenFile`) or an environment variable (`tokenEnv`).',
    );
  if (!wantsToken && token !== undefined)
    throw usageError(
      `A token was given, and ${text} has no ${TOKEN_PLACEHOLDER} to put it in.`,
      `Write ${TOKEN_PLACEHOLDER} where the token goes in the URL's path.`,
    );
  if (token !== undefined && !/^[\x21-\x7e]+$/.test(token))
    throw usageError('The token holds spaces or characters outside printable ASCII: it is not a download token.');
  // The URL is parsed as given (braces and all): its own mistakes are said without the token.
  const { url: shownDepot } = parseDepotUrl(text);
  const path = decodeURIComponent(shownDepot.base.pathname);
  const index = posix.basename(path);
  if (!index.endsWith('.xml') || path.endsWith('/'))
    throw usageError(
      `${text} does not end with the root index's file name.`,
      'Give the URL of the index itself, e.g. https://<host>/<path>/index.xml or .../vmw-depot-index.xml.',
    );
  const folder = posix.dirname(path);
  if (wantsToken && !folder.includes(TOKEN_PLACEHOLDER)) throw usageError(`${text} has ${TOKEN_PLACEHOLDER} in the index's name, not in a folder of its path.`);
  const base = new URL(shownDepot.base.href);
  base.pathname = folder
    .split('/')
    .map((part) => (token !== undefined ? part.split(TOKEN_PLACEHOLDER).map(encodeURIComponent).join(encodeURIComponent(token)) : encodeURIComponent(part)))
    .join('/');
  return { depot: { ...shownDepot, base }, index, shown: text };
}
