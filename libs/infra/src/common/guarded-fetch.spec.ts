import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { AddressRefused, guardedFetch } from './guarded-fetch.js';

const loopbackRefused = (host: string, address: string) =>
  address.startsWith('127.') ? `refused ${host} at ${address}` : null;

describe('guardedFetch', () => {
  let server: http.Server;
  let port: number;
  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', 'x-seen': String(req.headers['x-token']) });
        res.end(JSON.stringify({ method: req.method, body }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(() => server.close());

  it('fetches like fetch when the address is allowed: method, headers, body, status', async () => {
    const f = guardedFetch(() => null);
    const res = await f(`http://127.0.0.1:${port}/x`, { method: 'POST', headers: { 'x-token': 't' }, body: '{"a":1}' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-seen'), 't');
    assert.deepEqual(await res.json(), { method: 'POST', body: '{"a":1}' });
  });

  it('refuses an address literal before connecting', async () => {
    await assert.rejects(guardedFetch(loopbackRefused)(`http://127.0.0.1:${port}/`), AddressRefused);
  });

  it('checks the address the connection looks up: a name that rebinds to loopback is refused at connect time', async () => {
    let lookups = 0;
    // The first answer (an earlier check) was public; the connection's own lookup gets loopback.
    const rebinding = (_host: string, cb: (e: Error | null, a: Array<{ address: string; family: number }>) => void) => {
      lookups++;
      cb(null, [{ address: lookups === 1 ? '93.184.216.34' : '127.0.0.1', family: 4 }]);
    };
    rebinding('rebind.example', () => undefined);
    const f = guardedFetch(loopbackRefused, rebinding);
    await assert.rejects(f(`http://rebind.example:${port}/`), /refused rebind\.example at 127\.0\.0\.1/);
    // Allowed, the same name connects to what the lookup answered.
    const allowed = guardedFetch(() => null, rebinding);
    assert.equal((await allowed(`http://rebind.example:${port}/`)).status, 200);
  });

  it('an aborted signal stops the request', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await assert.rejects(guardedFetch(() => null)(`http://127.0.0.1:${port}/`, { signal: controller.signal }));
  });
});
