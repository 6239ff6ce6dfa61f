import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { browserPolicy, navigationProblem } from './browser-policy.js';

const hosts: Record<string, string[]> = {
  'example.com': ['93.184.216.34'],
  'intranet.corp': ['10.0.0.5'],
  'rebind.example': ['93.184.216.34', '127.0.0.1'],
  localhost: ['127.0.0.1', '::1'],
  'self.example': ['203.0.113.9'],
};
const resolve = async (host: string) => hosts[host] ?? [];
const check = (url: string, allow: string[] = [], block: string[] = [], own: string[] = ['203.0.113.9']) =>
  navigationProblem(url, browserPolicy(allow, block, own), resolve);
const blocked = (host: string) => `Navigation to "${host}" blocked by browser policy`;

describe('navigationProblem (the AI browser policy)', () => {
  it('public http(s) addresses pass; about:blank passes', async () => {
    assert.equal(await check('https://example.com/a'), null);
    assert.equal(await check('http://93.184.216.34/'), null);
    assert.equal(await check('about:blank'), null);
  });

  it('loopback, link-local/metadata, private, shared, unspecified and IPv6 internal ranges are blocked', async () => {
    for (const [url, host] of [
      ['http://127.0.0.1:8080/', '127.0.0.1'],
      ['http://localhost/', 'localhost'],
      ['http://169.254.169.254/latest/meta-data', '169.254.169.254'],
      ['http://10.1.2.3/', '10.1.2.3'],
      ['http://172.16.0.1/', '172.16.0.1'],
      ['http://192.168.1.1/', '192.168.1.1'],
      ['http://100.64.0.1/', '100.64.0.1'],
      ['http://0.0.0.0/', '0.0.0.0'],
      ['http://[::1]/', '::1'],
      ['http://[fd00::1]/', 'fd00::1'],
      ['http://[fe80::1]/', 'fe80::1'],
      ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
      ['http://intranet.corp/', 'intranet.corp'],
      ['http://rebind.example/', 'rebind.example'],
    ]) {
      assert.equal(await check(url!), blocked(host!), url);
    }
  });

  it("the server's own addresses are blocked", async () => {
    assert.equal(await check('http://self.example/'), blocked('self.example'));
    assert.equal(await check('http://203.0.113.9/'), blocked('203.0.113.9'));
  });

  it('SVC_BROWSER_ALLOW opens hosts, *.domains, IPs and CIDRs', async () => {
    assert.equal(await check('http://127.0.0.1:3000/', ['127.0.0.1']), null);
    assert.equal(await check('http://localhost/', ['127.0.0.0/8', '::1']), null);
    assert.equal(await check('http://intranet.corp/', ['intranet.corp']), null);
    assert.equal(await check('http://intranet.corp/', ['10.0.0.0/8']), null);
    assert.equal(await check('http://a.intranet.corp/', ['*.intranet.corp']), null, 'unresolvable: Chromium answers');
    assert.equal(await check('http://10.9.9.9/', ['10.0.0.0/16']), blocked('10.9.9.9'));
  });

  it('SVC_BROWSER_BLOCK refuses public hosts, by name, suffix or address', async () => {
    assert.equal(await check('https://example.com/', [], ['example.com']), blocked('example.com'));
    assert.equal(await check('https://www.ads.example/', [], ['*.ads.example']), blocked('www.ads.example'));
    assert.equal(await check('https://example.com/', [], ['93.184.216.0/24']), blocked('example.com'));
  });

  it('schemes other than http(s) are refused', async () => {
    assert.equal(await check('file:///etc/passwd'), blocked('file:/etc/passwd'));
    assert.equal(await check('chrome://settings'), blocked('settings'));
    assert.equal(await check('javascript:alert(1)'), blocked('javascript:alert(1)'));
    assert.equal(await check('data:text/html,hi'), blocked('data:text/html,hi'));
    assert.equal(await check('not a url'), blocked('not a url'));
  });
});
