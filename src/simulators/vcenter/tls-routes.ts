import type express from 'express';
import type { Response } from 'express';
import { MGMT_API, MGMT_TLS_KEY_FIELD, type MgmtApiGeneration } from '../../constants.js';
import { wrapValue, type CsrSpec, type TlsReplaceSpec } from '../../vcenter/wire.js';
import type { MgmtState } from './state.js';
import { checkReplace, makeCsr, tlsInfo } from './certs.js';
import type { RequireSession } from './session-routes.js';
import { specOf } from './spec.js';

/** Replaces the served certificate (any transport's plain spec); the restart follows once the answer is out. */
export function replace(state: MgmtState, spec: Record<string, unknown>): void {
  const request: TlsReplaceSpec = {
    cert: spec.cert as string,
    root_cert: spec.root_cert as string | undefined,
    [MGMT_TLS_KEY_FIELD]: spec[MGMT_TLS_KEY_FIELD] as string | undefined,
  };
  const next = checkReplace(request, { ...state, trustedRoots: state.chains.pems() });
  state.current = { certPem: next.certPem, keyPem: next.keyPem, chainPems: next.chainPems };
  state.pendingKeyPem = undefined;
  // Published as trusted, intermediates too, so that a later replacement without root_cert can chain through them.
  state.chains.publish(next.rootPems);
}

/** The restart must not cut the answer of a replacement off: the connection closes after it, then the server restarts. */
export function restartAfter(state: MgmtState, res: Response): void {
  res.set('Connection', 'close');
  state.onReplaced(new Promise<void>((resolve) => res.on('close', () => resolve())));
}

/** The certificate API of one generation: a CSR, the served certificate, its replacement. */
export function registerTlsRoutes(app: express.Express, generation: MgmtApiGeneration, state: MgmtState, requireSession: RequireSession): void {
  const paths = MGMT_API[generation];

  app.post(paths.tlsCsr, async (req, res) => {
    requireSession(req);
    const { csrPem, keyPem } = await makeCsr(specOf(req, generation) as CsrSpec, state.hostname);
    state.pendingKeyPem = keyPem;
    res.status(generation === 'rest' ? 200 : 201).json(wrapValue(generation, { csr: csrPem }));
  });

  app.get(paths.tls, (req, res) => {
    requireSession(req);
    res.status(200).json(wrapValue(generation, tlsInfo(state.current.certPem)));
  });

  app.put(paths.tls, (req, res) => {
    requireSession(req);
    replace(state, specOf(req, generation));
    restartAfter(state, res);
    res.status(generation === 'rest' ? 200 : 204).end();
  });
}
