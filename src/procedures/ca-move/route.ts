import { INSTALLER_TRUSTED_CERTS_FIELD_SINCE } from '../../constants.js';
import { anchorsChain, readServedChain, versionAtLeast, type TrustedCertificate } from '../../installer/index.js';
import { DepotkitError, EXIT } from '../../util/errors.js';
import { reachText, type DepotReach } from './reach.js';

/**
 * The way a consumer gets the new CA: with its depot settings (9.1.1 and
 * later take certificates there), or by the separate import of the trusted
 * certificates (9.0.x and 9.1.0).
 */
export type CaRoute = 'depot-settings' | 'trusted-certificates';

export function caRouteOf(version: string): CaRoute {
  return versionAtLeast(version, INSTALLER_TRUSTED_CERTS_FIELD_SINCE) ? 'depot-settings' : 'trusted-certificates';
}

/**
 * What a consumer keeps trusting when the new CA goes with its depot
 * settings: the certificates it lists that anchor the chain the depot serves
 * now (the old CA while the old certificate is served), sent along so that the
 * update's own validation passes whatever the consumer does with what it was
 * sent before. Once the new certificate is served the old CA anchors nothing,
 * so a retired CA never comes back. The chain is read once per move, each
 * listed certificate judged once.
 */
export class ServedAnchors {
  private chain: Promise<string[] | undefined> | undefined;
  private readonly judged = new Map<string, boolean>();

  constructor(
    private readonly reach: DepotReach,
    private readonly timeoutMs: number,
  ) {}

  async keptFrom(listed: TrustedCertificate[]): Promise<string[]> {
    this.chain ??= readServedChain(new URL(this.reach.origin), this.timeoutMs, this.reach.serverName);
    const chain = await this.chain;
    if (!chain) {
      this.chain = undefined; // Asked again for the next consumer: the depot may be back.
      throw new DepotkitError(
        `The depot at ${reachText(this.reach)} does not answer: the depot settings update carrying the new CA would fail its validation, so nothing was sent.`,
        EXIT.problems,
      );
    }
    return listed.map((e) => e.certificate).filter((pem) => typeof pem === 'string' && this.anchors(pem, chain));
  }

  private anchors(pem: string, chain: string[]): boolean {
    let verdict = this.judged.get(pem);
    if (verdict === undefined) this.judged.set(pem, (verdict = anchorsChain(pem, chain)));
    return verdict;
  }
}
