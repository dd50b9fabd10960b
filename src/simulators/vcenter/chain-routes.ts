import type express from 'express';
import { MGMT_API, type MgmtApiGeneration } from '../../constants.js';
import { isObject, wrapValue } from '../../vcenter/wire.js';
import type { MgmtState } from './state.js';
import type { RequireSession } from './session-routes.js';
import { specOf } from './spec.js';
import { ChainInvalid, type TrustedChains } from './trusted-chains.js';

/** The X509CertChain of the API: `{"cert_chain": [PEM, ...]}`. */
export const certChain = (pems: string[]) => ({ cert_chain: pems });

/** A create spec `{cert_chain: {cert_chain: [PEM...]}, chain?}` (plain JSON, any transport): the new chain's id. */
export function createChain(chains: TrustedChains, spec: Record<string, unknown>): string {
  const list = isObject(spec.cert_chain) ? spec.cert_chain.cert_chain : undefined;
  if (!Array.isArray(list)) throw new ChainInvalid('cert_chain must be an object whose cert_chain is a list of PEM certificates.');
  if (spec.chain !== undefined && (typeof spec.chain !== 'string' || spec.chain === '')) throw new ChainInvalid('chain must be a non-empty string.');
  return chains.create(list, spec.chain);
}

/** vCenter's trusted root chains in one generation's paths and shapes: list, create, get, delete. */
export function registerChainRoutes(app: express.Express, generation: MgmtApiGeneration, state: MgmtState, requireSession: RequireSession): void {
  const path = MGMT_API[generation].trustedRootChains;
  const one = `${path}/:chain`;

  app.get(path, (req, res) => {
    requireSession(req);
    res.status(200).json(
      wrapValue(
        generation,
        state.chains.ids().map((chain) => ({ chain })),
      ),
    );
  });

  app.post(path, (req, res) => {
    requireSession(req);
    const id = createChain(state.chains, specOf(req, generation));
    res.status(generation === 'rest' ? 200 : 201).json(wrapValue(generation, id));
  });

  app.get(one, (req, res) => {
    requireSession(req);
    res.status(200).json(wrapValue(generation, { cert_chain: certChain(state.chains.get(String(req.params.chain))) }));
  });

  app.delete(one, (req, res) => {
    requireSession(req);
    state.chains.delete(String(req.params.chain));
    res.status(generation === 'rest' ? 200 : 204).end();
  });
}
