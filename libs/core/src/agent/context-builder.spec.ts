import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message, MessageMeta } from '../kernel/conversation.js';
import { buildHistory } from './context-builder.js';

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
const texts = (messages: Message[]) =>
  buildHistory(messages).map(
    (m) => `${m.role}: ${m.content.map((b) => (b.type === 'text' ? b.text : b.type)).join(' | ')}`,
  );

describe('buildHistory: a failed turn’s messages stay out of the next request', () => {
  it('a message sent again by Retry is seen once, without the failed partial reply', () => {
    const history = texts([
      msg('user', 'Hello'),
      msg('assistant', 'Hi.'),
      msg('user', 'Plan a trip', { memorySnapshot: '' }),
      msg('assistant', 'Partial pla', { error: 'overloaded' }),
      msg('user', 'Plan a trip'),
      msg('user', 'Plan a trip'),
    ]);
    assert.deepEqual(history, ['user: Hello', 'assistant: Hi.', 'user: Plan a trip']);
  });

  it('a different message after a failed turn keeps both user messages, not the failed reply', () => {
    const history = texts([msg('user', 'First'), msg('assistant', 'Half', { error: 'boom' }), msg('user', 'Second')]);
    assert.deepEqual(history, ['user: First | Second']);
  });

  it('the same text with other images is not a retry; a stopped reply stays', () => {
    const image = { mediaType: 'image/png', data: 'AAAA' };
    const history = texts([
      msg('user', 'Look', { images: [image] }),
      msg('user', 'Look'),
      msg('assistant', 'Stopped hal', { interrupted: true }),
    ]);
    assert.deepEqual(history, ['user: image | Look | Look', 'assistant: Stopped hal']);
  });

  it('the memory snapshot of a retried first message goes with the retry', () => {
    const history = texts([msg('user', 'Go', { memorySnapshot: 'likes tea' }), msg('user', 'Go')]);
    assert.equal(history.length, 1);
    assert.match(history[0]!, /likes tea/);
    assert.match(history[0]!, /\| Go$/);
  });

  it('Regenerate: the superseded reply and the first sending of its message stay out', () => {
    const history = texts([
      msg('user', 'Hello'),
      msg('assistant', 'Hi.'),
      msg('user', 'A poem'),
      msg('assistant', 'Roses are red', { superseded: true }),
      msg('user', 'A poem'),
      msg('assistant', 'Violets are blue'),
    ]);
    assert.deepEqual(history, ['user: Hello', 'assistant: Hi.', 'user: A poem', 'assistant: Violets are blue']);
  });

  it('Edit: the edited message and its superseded reply stay out; without a reply the message itself was marked', () => {
    const edited = texts([
      msg('user', 'A poem about cats'),
      msg('assistant', 'Cats…', { superseded: true }),
      msg('user', 'A poem about dogs'),
    ]);
    assert.deepEqual(edited, ['user: A poem about dogs']);
    const unanswered = texts([
      msg('user', 'Hello'),
      msg('assistant', 'Hi.'),
      msg('user', 'Typo', { superseded: true }),
      msg('user', 'Fixed'),
    ]);
    assert.deepEqual(unanswered, ['user: Hello', 'assistant: Hi.', 'user: Fixed']);
  });
});

describe('buildHistory: attachments (files of the space sent with a message)', () => {
  const photo = { path: 'attachments/a.png', name: 'a.png', mediaType: 'image/png', size: 4, image: true };
  const notes = { path: 'attachments/n.txt', name: 'n.txt', mediaType: 'text/plain', size: 9, image: false };

  it('names a file that is not an image for Read, and an image no longer readable', () => {
    const history = buildHistory([
      msg('user', 'Read this', { attachments: [notes] }),
      msg('assistant', 'Done.'),
      msg('user', 'And this', { attachments: [photo], missingAttachments: ['attachments/a.png'] }),
    ]);
    const blocks = history.flatMap((m) => m.content).map((b) => (b.type === 'text' ? b.text : b.type));
    assert.deepEqual(blocks, [
      '[Attached file: attachments/n.txt (text/plain, 9 bytes) in the workspace; open it with Read]',
      'Read this',
      'Done.',
      '[Attached image attachments/a.png is no longer in the workspace]',
      'And this',
    ]);
  });

  it('the same text with other attachments is not a retry; with the same ones it is', () => {
    const other = texts([
      msg('user', 'Look', { attachments: [photo] }),
      msg('assistant', 'Half', { error: 'boom' }),
      msg('user', 'Look', { attachments: [notes] }),
    ]);
    assert.equal(other.length, 1);
    assert.equal(other[0]!.split('Look').length - 1, 2, other[0]);
    const retried = texts([
      msg('user', 'Look', { attachments: [notes] }),
      msg('assistant', 'Half', { error: 'boom' }),
      msg('user', 'Look', { attachments: [notes] }),
    ]);
    assert.equal(retried[0]!.split('Look').length - 1, 1, retried[0]);
  });
});
