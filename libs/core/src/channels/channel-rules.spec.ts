import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  inScope,
  maskConfig,
  mergeConfig,
  missingConfigField,
  parseCommand,
  senderRole,
  splitReply,
  stripMentions,
} from './channel-rules.js';

const FIELDS = [
  { key: 'secret', label: 'Secret', type: 'secret' as const, required: true },
  { key: 'callbackUrl', label: 'URL', type: 'url' as const, required: true },
];

describe('channel rules', () => {
  it('masks secret fields that hold a value, and a "***" in a change keeps the stored one', () => {
    assert.deepEqual(maskConfig({ secret: 's', callbackUrl: 'http://x' }, FIELDS), {
      secret: '***',
      callbackUrl: 'http://x',
    });
    assert.deepEqual(maskConfig({ secret: '' }, FIELDS), { secret: '' });
    assert.deepEqual(mergeConfig({ secret: 's', a: 1 }, { secret: '***', a: null, b: 2 }), { secret: 's', b: 2 });
    assert.equal(missingConfigField({ secret: 's' }, FIELDS), 'callbackUrl');
    assert.equal(missingConfigField({ secret: 's', callbackUrl: 'u' }, FIELDS), null);
  });

  it('strips leading mentions in their platforms forms', () => {
    assert.equal(stripMentions('@bot hello'), 'hello');
    assert.equal(stripMentions('@bot, @other: hi there'), 'hi there');
    assert.equal(stripMentions('<@U123ABC> what now'), 'what now');
    assert.equal(stripMentions('mail me at a@b.c'), 'mail me at a@b.c');
  });

  it('reads /stop and /clear (with a bot name, any case), nothing else', () => {
    assert.equal(parseCommand('/stop'), 'stop');
    assert.equal(parseCommand(' /STOP@my_bot '), 'stop');
    assert.equal(parseCommand('/clear'), 'clear');
    assert.equal(parseCommand('/reset'), 'clear');
    assert.equal(parseCommand('/stop now please'), null);
    assert.equal(parseCommand('please /stop'), null);
  });

  it('owner, first direct sender, guest or denied', () => {
    assert.equal(senderRole({ owners: ['a'], guestPolicy: 'deny' }, 'a', 'group'), 'owner');
    assert.equal(senderRole({ owners: [], guestPolicy: 'deny' }, 'b', 'direct'), 'claims-ownership');
    assert.equal(senderRole({ owners: [], guestPolicy: 'deny' }, 'b', 'group'), 'denied');
    assert.equal(senderRole({ owners: ['a'], guestPolicy: 'chat-only' }, 'b', 'direct'), 'guest');
    assert.ok(inScope('all', 'group') && inScope('direct', 'direct') && !inScope('group', 'direct'));
  });

  it('splits a reply to the limit in order, at paragraph, line or word breaks, else hard', () => {
    assert.deepEqual(splitReply('short', 10), ['short']);
    const paragraphs = 'aaaa aaaa\n\nbbbb bbbb\n\ncccc';
    assert.deepEqual(splitReply(paragraphs, 12), ['aaaa aaaa', 'bbbb bbbb', 'cccc']);
    assert.deepEqual(splitReply('x'.repeat(25), 10), ['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5)]);
    const words = Array.from({ length: 200 }, (_, i) => `w${i}`).join(' ');
    const parts = splitReply(words, 50);
    assert.ok(parts.every((p) => p.length <= 50));
    assert.equal(parts.join(' '), words);
    // A surrogate pair is never cut in two.
    const emoji = '😀'.repeat(10);
    const cut = splitReply(emoji, 5);
    assert.equal(cut.join(''), emoji);
    assert.ok(cut.every((p) => !/[\ud800-\udbff]$/.test(p)));
  });
});
