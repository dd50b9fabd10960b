import type express from 'express';
import type { Request } from 'express';
import { MGMT_API, MGMT_TLS_KEY_FIELD, type MgmtApiGeneration } from '../../constants.js';
import { isObject, wrapValue, type CsrSpec, type TlsReplaceSpec } from '../../mgmt/wire.js';
import type { MgmtState } from './app.js';
import { checkReplace, makeCsr, tlsInfo } from './certs.js';
import { badRequest } from './http-error.js';
import type { RequireSession } from './session-routes.js';

/** The request's spec: wrapped in `spec` on /rest, the body itself on /api. */
function specOf(req: Request, generation: MgmtApiGeneration): Record<string, unknown> {
  if (!req.is('application/json')) throw badRequest('The request needs a JSON body with Content-Type: application/json.');
  const body: unknown = req.body;
  const spec = generation === 'rest' ? (isObject(body) ? body.spec : undefined) : body;
  if (!isObject(spec)) {
    throw badRequest(generation === 'rest' ? 'The request body must be an object with a "spec" field.' : 'The request body must be a JSON object.');
  }
  return spec;
}

/** Replaces the served certificate; the restart follows once the answer is out. */
function replace(state: MgmtState, spec: Record<string, unknown>): void {
  const request: TlsReplaceSpec = {
    cert: spec.cert as string,
    root_cert: spec.root_cert as string | undefined,
    [MGMT_TLS_KEY_FIELD]: spec[MGMT_TLS_KEY_FIELD] as string | undefined,
  };
  const next = checkReplace(request, state);
  state.current = { certPem: next.certPem, keyPem: next.keyPem, chainPems: next.chainPems };
  state.pendingKeyPem = undefined;
  // Published as trusted, intermediates too, so that a later replacement without root_cert can chain through them.
  for (const pem of next.rootPems) if (!state.trustedRoots.includes(pem)) state.trustedRoots.push(pem);
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
    // The restart must not cut this response off: close the connection after it, then restart.
    res.set('Connection', 'close');
    state.onReplaced(new Promise<void>((resolve) => res.on('close', () => resolve())));
    res.status(generation === 'rest' ? 200 : 204).end();
  });
}
