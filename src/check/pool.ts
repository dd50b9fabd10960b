/** How long a client's requests took, from sending to the answer's head, in milliseconds. */
export class RequestTiming {
  /** The first request, which waited for its connection's handshakes. */
  first: number | undefined;
  /** The fastest, on a connection already open: about one round trip and the server's work. */
  fastest: number | undefined;

  record(ms: number): void {
    this.first ??= ms;
    this.fastest = Math.min(this.fastest ?? ms, ms);
  }
}

/**
 * Requests a connection takes in turn before another is worth opening: at least 2, as a handshake takes two round
 * trips (TCP's and TLS's) where a request takes one; at most 8, so that on a near server, where a handshake is mostly
 * CPU, the server still reads the next request while the check reads the last answer.
 */
const PER_CONNECTION = { least: 2, most: 8 } as const;

/**
 * How many connections `requests` sent at once are worth. A request queued behind q others on a kept-alive
 * connection is answered after about q request times, one on a new connection after a handshake and a request:
 * another connection pays when q exceeds handshake / request time, the handshake estimated as the first request's
 * time less the fastest's. Nothing to go by (no request answered yet): the fewest connections.
 */
export function connectionsWorth(requests: number, timing: RequestTiming): number {
  const { first, fastest } = timing;
  const ratio = first !== undefined && fastest !== undefined && fastest > 0 ? Math.round((first - fastest) / fastest) : PER_CONNECTION.most;
  const perConnection = Math.min(PER_CONNECTION.most, Math.max(PER_CONNECTION.least, ratio));
  return Math.max(1, Math.ceil(requests / perConnection));
}
