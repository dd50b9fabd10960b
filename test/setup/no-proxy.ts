// The tests talk to servers on 127.0.0.1 (and curl, Java and depotkit's mirror honour the proxy variables): a proxy
// set for the machine, e.g. to reach the npm registry, must not carry them. Tests of the proxy set their own.
for (const name of ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'all_proxy', 'ALL_PROXY', 'no_proxy', 'NO_PROXY']) {
  delete process.env[name];
}
