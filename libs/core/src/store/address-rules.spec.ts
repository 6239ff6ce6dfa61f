import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isBlockedAddress, normalizeSourceUrl, sourceUrlProblem } from './address-rules.js';

describe('store source address rules (SSRF)', () => {
  it('refuses loopback, private, link-local, unique-local and special addresses', () => {
    for (const ip of [
      '127.0.0.1',
      '127.9.9.9',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:0:127.0.0.1',
      '::ffff:0:7f00:1',
      '::ffff:10.0.0.1',
      '64:ff9b::a00:1',
      'ff02::1',
      'not-an-ip',
    ]) {
      assert.ok(isBlockedAddress(ip), ip);
    }
  });

  it('allows public addresses', () => {
    for (const ip of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '100.128.0.1']) {
      assert.ok(!isBlockedAddress(ip), ip);
    }
  });

  it('a source URL is http(s) without credentials and not an internal host', () => {
    assert.equal(sourceUrlProblem('https://example.com/catalog'), null);
    for (const bad of [
      'ftp://example.com',
      'file:///etc/passwd',
      'not a url',
      'http://localhost:8080',
      'http://api.localhost',
      'http://printer.local',
      'http://127.0.0.1',
      'http://[::1]/',
      'http://10.0.0.8/x',
      'http://169.254.169.254/latest',
      'http://user:pw@example.com',
      'http://2130706433/',
      'http://[::ffff:0:127.0.0.1]/',
    ]) {
      assert.notEqual(sourceUrlProblem(bad), null, bad);
    }
    assert.equal(normalizeSourceUrl('https://Example.com/a/#x'), 'https://example.com/a');
  });
});
