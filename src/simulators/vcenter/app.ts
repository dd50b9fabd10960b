import express from 'express';
import { MGMT_APPLIANCE_VERSION_PATH, MGMT_ERROR_TYPES } from '../../constants.js';
import { MGMT_MESSAGE_IDS, MGMT_SIM_BUILD } from './literals.js';
import { HttpError, answerError } from './http-error.js';
import { registerSessionRoutes, sessionChecker } from './session-routes.js';
import { registerTlsRoutes } from './tls-routes.js';
import { registerChainRoutes } from './chain-routes.js';
import { registerJsonRpc } from './jsonrpc.js';
import { registerVlcmRoutes } from './vlcm-routes.js';
import type { MgmtState } from './state.js';

/** The simulated server's state that outlives one listening period. */

/** The express app for both API generations, each on its own paths. */
export function mgmtApp(state: MgmtState): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '1mb', strict: false }));
  const requireSession = sessionChecker(state.sessions);
  // vAPI JSON-RPC on the /api generation's own root, for the SDKs that speak only it.
  if (state.generations.includes('api')) registerJsonRpc(app, state);
  // vLCM's depot API and the appliance's version exist on the /api generation only.
  if (state.generations.includes('api')) {
    registerVlcmRoutes(app, state.vlcm, requireSession);
    app.get(MGMT_APPLIANCE_VERSION_PATH, (req, res) => {
      requireSession(req);
      res.status(200).json({ version: state.version, build: MGMT_SIM_BUILD, product: 'VMware vCenter Server', type: 'vCenter Server' });
    });
  }
  for (const generation of state.generations) {
    registerSessionRoutes(app, generation, state.users, state.sessions, requireSession);
    registerTlsRoutes(app, generation, state, requireSession);
    registerChainRoutes(app, generation, state, requireSession);
  }
  app.use((req) => {
    throw new HttpError(404, MGMT_ERROR_TYPES.notFound, MGMT_MESSAGE_IDS.notFound, `No operation at ${req.method} ${req.path}.`);
  });
  app.use(answerError);
  return app;
}

export type { MgmtState } from './state.js';
