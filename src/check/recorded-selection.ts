import { SERVE_PAGES } from '../constants.js';
import { type Choice, parseChoices } from '../depot/selection.js';
import { isObject } from '../util/json.js';
import type { DepotUrl } from '../util/depot-url.js';
import { type DepotClient, fetchFile } from './http.js';

/** Far above a status page's JSON, low enough that another server's answer is not read whole. */
const STATUS_LIMIT = 16 * 1024 * 1024;

/**
 * The selection a depot served by `depotkit serve` records (a selective mirror or unpack cut it), as its status
 * page's JSON gives it (`selectionChoices`), so that what was left out is said as left out, as serve's page and
 * `depot verify` say it. Undefined for any other server, a depot of the whole catalog, or an answer that is not
 * that JSON: the check then judges every binary, as before. Asked with the credentials the depot's files take.
 */
export async function recordedSelection(client: DepotClient, depot: DepotUrl, authorization: string | undefined): Promise<Choice[] | undefined> {
  try {
    const url = new URL(SERVE_PAGES.status, depot.base.origin).href;
    const answer = await fetchFile(client, url, 'GET', authorization, STATUS_LIMIT, { accept: 'application/json' });
    if (answer.status !== 200 || !answer.body || !/^application\/json/i.test(String(answer.headers['content-type'] ?? ''))) return undefined;
    const report = JSON.parse(answer.body.toString('utf8')) as unknown;
    return isObject(report) ? parseChoices(report.selectionChoices) : undefined;
  } catch {
    // A server that does not answer this is no depotkit serve: nothing is recorded there.
    return undefined;
  }
}
