import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { clientIp, forwardedClient } from './client-ip.js';

const request = (forwarded: string | undefined, remote = '10.0.0.9'): IncomingMessage =>
  ({
    headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded },
    socket: { remoteAddress: remote },
  }) as never;

describe('client address behind trusted proxies', () => {
  it('takes the entry the trusted proxy appended (rightmost for one hop)', () => {
    assert.equal(forwardedClient('1.1.1.1, 2.2.2.2, 203.0.113.7', 1), '203.0.113.7');
    assert.equal(forwardedClient('203.0.113.7', 1), '203.0.113.7');
  });

  it('with two hops, the second from the right', () => {
    assert.equal(forwardedClient('6.6.6.6, 203.0.113.7, 10.0.0.2', 2), '203.0.113.7');
    assert.equal(forwardedClient('10.0.0.2', 2), null, 'fewer entries than hops: not through the proxies');
  });

  it('forged entries on the left do not change the answer', () => {
    for (const forged of ['', '9.9.9.9, ', '1.2.3.4, 5.6.7.8, ', 'garbage, ']) {
      assert.equal(clientIp(request(`${forged}203.0.113.7`), { trustProxy: true, trustProxyHops: 1 }), '203.0.113.7');
    }
  });

  it('ignores the header unless proxies are trusted, and falls back to the socket', () => {
    assert.equal(clientIp(request('1.1.1.1'), { trustProxy: false, trustProxyHops: 1 }), '10.0.0.9');
    assert.equal(clientIp(request(undefined, '::ffff:10.1.1.1'), { trustProxy: true, trustProxyHops: 1 }), '10.1.1.1');
  });
});
