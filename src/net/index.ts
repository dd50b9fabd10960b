// depotkit's one network layer: every HTTP(S) request and TLS handshake of the library and its
// simulators' outbound fetches (serve's and the simulators' listeners excepted) goes through here.
export { NET_ERRORS, type NetErrorCode, describeNetworkFailure, netError, networkErrorCode } from './errors.js';
export { type Trust, basicAuthorization } from './trust.js';
export { type ConnectOptions, type TlsRules, type TlsSessions } from './connect.js';
export { NetAgent, type StreamAnswer, type TextAnswer, discard, requestStream, requestText } from './request.js';
export { AnswerTooLargeError, JsonTransport, type JsonTransportOptions, type Reply, type SendOptions } from './json-transport.js';
export { type ProxyChoice, type ProxyOptions, type ProxyRoute, type ProxyUse, chooseProxy, noProxyEntry, parseProxyUrl } from './proxy.js';
export { ProxyFailure } from './tunnel.js';
export {
  type Served,
  type ServedChain,
  type ServedOptions,
  type WaitOptions,
  type WaitStatus,
  type Waited,
  servedCertificate,
  waitUntilServed,
} from './served.js';
