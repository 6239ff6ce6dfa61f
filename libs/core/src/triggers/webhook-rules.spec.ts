import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { deliveryId, presentedSignature, signatureValid, webhookClaims } from './webhook-rules.js';

const body = Buffer.from('{"action":"opened"}');
const sign = (secret: string, raw: Buffer) => createHmac('sha256', secret).update(raw).digest('hex');

describe('webhook signatures', () => {
  it('accepts the three headers, GitHub style with its sha256= prefix', () => {
    const hex = sign('s3cret', body);
    assert.equal(signatureValid('s3cret', body, { 'x-hub-signature-256': `sha256=${hex}` }), true);
    assert.equal(signatureValid('s3cret', body, { 'x-signature-256': hex }), true);
    assert.equal(signatureValid('s3cret', body, { 'x-webhook-signature': hex.toUpperCase() }), true);
  });

  it('refuses a wrong secret, another body, a missing or malformed header', () => {
    const hex = sign('s3cret', body);
    assert.equal(signatureValid('other', body, { 'x-signature-256': hex }), false);
    assert.equal(signatureValid('s3cret', Buffer.from('{"action":"closed"}'), { 'x-signature-256': hex }), false);
    assert.equal(signatureValid('s3cret', body, {}), false);
    assert.equal(signatureValid('s3cret', body, { 'x-hub-signature-256': hex }), false, 'GitHub header needs sha256=');
    assert.equal(signatureValid('s3cret', body, { 'x-signature-256': 'abc' }), false);
    assert.equal(presentedSignature({ 'x-webhook-signature': 'sha256=ab' }), 'ab');
  });
});

describe('webhook de-duplication keys', () => {
  it('claims the delivery id and the body; the same body or id gives the same key', () => {
    const withId = webhookClaims('app', 'hook', body, 'd-1');
    assert.equal(withId.length, 2);
    assert.deepEqual(webhookClaims('app', 'hook', body, 'd-1'), withId);
    const noId = webhookClaims('app', 'hook', body, null);
    assert.deepEqual(noId, [withId[1]]);
    assert.equal(withId[1]!.windowMs, 10 * 60_000);
    assert.notEqual(webhookClaims('app', 'hook', Buffer.from('{}'), null)[0]!.key, noId[0]!.key);
    assert.notEqual(webhookClaims('other', 'hook', body, null)[0]!.key, noId[0]!.key);
  });

  it('reads X-Webhook-Id, else X-GitHub-Delivery', () => {
    assert.equal(deliveryId({ 'x-webhook-id': 'a', 'x-github-delivery': 'b' }), 'a');
    assert.equal(deliveryId({ 'x-github-delivery': 'b' }), 'b');
    assert.equal(deliveryId({}), null);
  });
});
