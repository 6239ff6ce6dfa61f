import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message, MessageMeta } from '../kernel/conversation.js';
import { autoTitleOn, cleanTitle, firstExchange } from './conversation-titles.js';

let position = 0;
const msg = (role: Message['role'], content: string, meta: MessageMeta = {}): Message => ({
  id: `m${position}`,
  conversationId: 'c',
  position: position++,
  role,
  content,
  meta,
  createdAt: new Date(0),
});

describe('conversation titles', () => {
  it('the model’s answer becomes a short title: first line, no Markdown, quotes or final period', () => {
    assert.equal(cleanTitle('"Greeting in the shell."'), 'Greeting in the shell');
    assert.equal(cleanTitle('\n# Title: **Trip to Lisbon**\nmore'), 'Trip to Lisbon');
    assert.equal(cleanTitle('  '), '');
    assert.equal(cleanTitle('x'.repeat(200)).length, 80);
  });

  it('only after the first successful reply', () => {
    assert.equal(firstExchange([msg('user', 'Hi')]), null);
    assert.deepEqual(firstExchange([msg('user', 'Hi'), msg('assistant', 'Half', { error: 'boom' })]), null);
    assert.deepEqual(
      firstExchange([
        msg('user', 'Hi'),
        msg('assistant', 'Half', { error: 'boom' }),
        msg('user', 'Hi'),
        msg('assistant', 'Hello'),
      ]),
      { user: 'Hi', reply: 'Hello' },
    );
    assert.equal(
      firstExchange([msg('user', 'Hi'), msg('assistant', 'Hello'), msg('user', 'More'), msg('assistant', 'Sure')]),
      null,
    );
  });

  it('is off unless the configuration switches it on', () => {
    assert.equal(autoTitleOn({}), false);
    assert.equal(autoTitleOn({ assistant: { serviceApi: true } }), false);
    assert.equal(autoTitleOn({ assistant: { autoTitle: true } }), true);
  });
});
