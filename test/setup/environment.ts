// Global set-up: what of the machine's environment the run's processes (vitest's workers and everything they
// start) do not inherit.
//
// - The proxy variables. The tests talk to servers on 127.0.0.1, and curl, Java and depotkit's mirror honour
//   them: a proxy set for the machine, e.g. to reach the npm registry, must not carry them. Tests of the proxy
//   set their own.
// - NODE_EXTRA_CA_CERTS. A machine may name its whole CA bundle there for npm; every node process then parses
//   it as it starts (about 140 certificates, 45 ms of CPU each start here, over 400 starts a run). The tests
//   trust only the CAs they make.
const UNSET = ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'all_proxy', 'ALL_PROXY', 'no_proxy', 'NO_PROXY', 'NODE_EXTRA_CA_CERTS'];

export default function setup(): void {
  for (const name of UNSET) delete process.env[name];
}
