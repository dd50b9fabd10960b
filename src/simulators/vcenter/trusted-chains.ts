import { createHash } from 'node:crypto';
import { normalizePem, readCertificate, splitPemBlocks } from '../../cert/index.js';
import { errorMessage } from '../../util/errors.js';

/** A chain the server already holds under the id asked for (the API's AlreadyExists). */
export class ChainExists extends Error {}
/** No chain under that id (the API's NotFound). */
export class ChainNotFound extends Error {}
/** A chain the server refuses: no certificate, or a block that is not one (the API's InvalidArgument). */
export class ChainInvalid extends Error {}

/**
 * The server's trusted root chains, each under its id. A create without an id gets one made
 * from the chain's first certificate (its SHA-1, in hex: the form vCenter's trust store names its
 * roots by; assumed, the API only says "one will be generated"). The certificates of every chain
 * are what a replacement without `root_cert` may chain to.
 */
export class TrustedChains {
  private readonly chains = new Map<string, string[]>();

  ids(): string[] {
    return [...this.chains.keys()];
  }

  get(id: string): string[] {
    const chain = this.chains.get(id);
    if (!chain) throw new ChainNotFound(`No trusted root chain ${id}.`);
    return chain;
  }

  /** Adds a chain of PEM certificates; returns its id. */
  create(pems: readonly unknown[], id?: string): string {
    const chain = checkedChain(pems);
    const chainId = id ?? createHash('sha1').update(readCertificate(chain[0]!).der).digest('hex');
    if (this.chains.has(chainId)) throw new ChainExists(`A trusted root chain ${chainId} exists already.`);
    this.chains.set(chainId, chain);
    return chainId;
  }

  /** Adds certificates published by a replacement's root_cert, each as its own chain unless held already. */
  publish(pems: readonly string[]): void {
    const held = new Set(this.pems());
    for (const pem of pems) if (!held.has(pem)) this.create([pem]);
  }

  delete(id: string): void {
    this.get(id);
    this.chains.delete(id);
  }

  /** Every certificate of every chain. */
  pems(): string[] {
    return [...this.chains.values()].flat();
  }
}

function checkedChain(pems: readonly unknown[]): string[] {
  if (pems.length === 0) throw new ChainInvalid('cert_chain holds no certificate.');
  return pems.map((pem, i) => {
    if (typeof pem !== 'string') throw new ChainInvalid(`cert_chain[${i}] must be PEM text.`);
    let blocks: string[];
    try {
      blocks = splitPemBlocks(pem, 'CERTIFICATE');
      for (const block of blocks) readCertificate(block);
    } catch (err) {
      throw new ChainInvalid(`cert_chain[${i}] is not a PEM certificate: ${errorMessage(err)}`);
    }
    if (blocks.length !== 1) throw new ChainInvalid(`cert_chain[${i}] must hold exactly one certificate, not ${blocks.length}.`);
    return normalizePem(blocks[0]!);
  });
}
