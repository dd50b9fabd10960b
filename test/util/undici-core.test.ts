import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import * as undici from 'undici';
import { describe, expect, it } from 'vitest';
import { createCa, issueServerCert } from '../../src/pki/index.js';
import { Agent, buildConnector, errors, request } from '../../src/util/undici-core.js';

describe("undici's core, loaded without its index", () => {
  it("is the very agent, connector and errors undici's index exports", () => {
    expect(Agent).toBe(undici.Agent);
    expect(buildConnector).toBe(undici.buildConnector);
    expect(errors).toBe(undici.errors);
  });

  it("asks what undici's own request asks and returns what it returns, over real TLS", async () => {
    const ca = await createCa({ cn: 'undici core test CA', keySize: 2048 });
    const cert = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
    const seen: string[] = [];
    const server = createServer({ key: cert.keyPem, cert: cert.certPem }, (req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        seen.push(`${req.method} ${req.url} ${req.headers['x-test'] ?? ''} ${body}`);
        res.writeHead(req.url?.startsWith('/missing') ? 404 : 200, { 'x-answer': req.url ?? '' });
        res.end(req.method === 'HEAD' ? undefined : `answer to ${req.url}`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const agent = new Agent({ connect: { ca: [ca.certPem] } });
    try {
      const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const asks = [
        { url: `${origin}/a/b?x=1&y=%20`, method: 'GET', headers: { 'x-test': 'one' } },
        { url: `${origin}/missing`, method: 'HEAD' },
        { url: new URL('/c', origin), method: 'POST', body: '{"k":1}' },
        { url: `${origin}/`, method: 'DELETE' },
      ] as const;
      for (const { url, ...options } of asks) {
        const answers = [];
        for (const send of [request, undici.request]) {
          const res = await send(url, { ...options, dispatcher: agent });
          answers.push({ status: res.statusCode, answer: res.headers['x-answer'], body: await res.body.text() });
        }
        expect(answers[0], `${options.method} ${String(url)}`).toEqual(answers[1]);
      }
      expect(seen).toEqual(['GET /a/b?x=1&y=%20 one ', 'HEAD /missing  ', 'POST /c  {"k":1}', 'DELETE /  '].flatMap((line) => [line, line]));
    } finally {
      await agent.close();
      server.close();
    }
  });
});
