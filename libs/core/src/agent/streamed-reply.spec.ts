import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LoggedEvent } from '../ports/event-log.port.js';
import { streamedReply } from './streamed-reply.js';

let seq = 0;
const ev = (channel: string, data: Record<string, unknown> = {}): LoggedEvent => ({ seq: ++seq, channel, data });

describe('streamedReply', () => {
  it('joins the deltas of the latest turn, blocks after a blank line', () => {
    const events = [
      ev('agent:turn-start'),
      ev('agent:message', { delta: 'old turn' }),
      ev('agent:complete'),
      ev('agent:turn-start'),
      ev('agent:message', { content: '', isNewTextBlock: true }),
      ev('agent:message', { delta: 'Hello ' }),
      ev('agent:message', { delta: 'world' }),
      ev('agent:thought', { thought: { id: 't' } }),
      ev('agent:message', { content: '', isNewTextBlock: true }),
      ev('agent:message', { delta: 'second' }),
    ];
    assert.equal(streamedReply(events), 'Hello world\n\nsecond');
  });

  it('a content without delta replaces the text', () => {
    const events = [
      ev('agent:turn-start'),
      ev('agent:message', { delta: 'draft' }),
      ev('agent:message', { content: 'final' }),
    ];
    assert.equal(streamedReply(events), 'final');
  });

  it('nothing streamed, or no turn in the log, is an empty reply', () => {
    assert.equal(
      streamedReply([ev('agent:turn-start'), ev('agent:message', { content: '', isNewTextBlock: true })]),
      '',
    );
    assert.equal(streamedReply([ev('agent:message', { delta: 'orphan' })]), '');
  });
});
