import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type HostAllowList, parseHostAllowList } from './host-allow-list.js';

const list = (raw: string): HostAllowList => {
  const parsed = parseHostAllowList(raw);
  if (typeof parsed === 'string') assert.fail(parsed);
  return parsed;
};

describe('parseHostAllowList', () => {
  it('an empty list allows nothing', () => {
    assert.equal(list('').allows('127.0.0.1', '127.0.0.1'), false);
    assert.equal(list(' , ').allows('localhost'), false);
  });

  it('a host name allows that name only, whatever it resolves to', () => {
    const allow = list('mcp.internal');
    assert.equal(allow.allows('mcp.internal', '10.1.2.3'), true);
    assert.equal(allow.allows('MCP.Internal.'), true);
    assert.equal(allow.allows('other.internal', '10.1.2.3'), false);
    assert.equal(allow.allows('x.mcp.internal'), false);
  });

  it('*.domain allows its sub-domains, not the domain itself', () => {
    const allow = list('*.corp.example');
    assert.equal(allow.allows('a.corp.example'), true);
    assert.equal(allow.allows('a.b.corp.example'), true);
    assert.equal(allow.allows('corp.example'), false);
    assert.equal(allow.allows('evilcorp.example'), false);
  });

  it('IP addresses and CIDR ranges match the URL host or the resolved address', () => {
    const allow = list('127.0.0.1, 10.0.0.0/8, fd00::/8');
    assert.equal(allow.allows('127.0.0.1'), true);
    assert.equal(allow.allows('127.0.0.2'), false);
    assert.equal(allow.allows('svc.local', '10.20.30.40'), true);
    assert.equal(allow.allows('svc.local', '11.0.0.1'), false);
    assert.equal(allow.allows('[fd12::1]'), true);
    assert.equal(allow.allows('fe80::1'), false);
    assert.equal(allow.allows('::ffff:127.0.0.1'), true, 'an IPv4-mapped address is its IPv4 address');
    assert.equal(allow.allows('::ffff:7f00:1'), true);
  });

  it('a bad entry is refused, naming it', () => {
    for (const bad of ['10.0.0.0/33', 'http://x', 'a b', '*.', '1.2.3.4/x']) {
      const parsed = parseHostAllowList(bad);
      assert.equal(typeof parsed, 'string', bad);
      assert.match(parsed as string, /is not a host name/);
    }
  });
});
