import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventFrame } from '#contracts/events.js';
import { fromFrame } from './event-frame.js';

/** A frame as the log's script writes it: the data without seq, then seq spliced in last. */
function scriptFrame(channel: string, rest: Record<string, unknown>, seq: number): string {
  const data = JSON.stringify(rest);
  const sep = data === '{}' ? '' : ',';
  return `{"type":"event","channel":${JSON.stringify(channel)},"data":${data.slice(0, -1)}${sep}"seq":${seq}}}`;
}

describe('fromFrame', () => {
  const conversationId = '7f0c2a9e-5b1d-4c8e-9a3f-2d6b8e1c4a70';

  it("reads a conversation event's channel, conversation and seq without decoding its data", () => {
    const seq = Date.now() * 1000 + 3; // seqs start from the clock: 16 digits
    const rest = { delta: 'He said "hi", then {"seq":1}}', isStreaming: true, spaceId: 's1', conversationId };
    const frame = scriptFrame('agent:message', rest, seq);
    const event = fromFrame(frame)!;
    assert.equal(event.channel, 'agent:message');
    assert.equal(event.conversationId, conversationId);
    assert.equal(event.seq, seq);
    assert.deepEqual(event.data, { ...rest, seq });
    assert.deepEqual(event.data, (JSON.parse(frame) as { data: unknown }).data);
  });

  it('decodes whole any frame not laid out that way, with the same answer', () => {
    const frames = [
      // conversationId not the member before seq
      scriptFrame('agent:message', { conversationId, delta: 'x', spaceId: 's' }, 5),
      // seq not data's last member
      eventFrame('agent:message', { seq: 5, conversationId }),
      // a nested object ends the data
      eventFrame('agent:message', { conversationId, nested: { conversationId: 'other', seq: 9 } }),
      // a quote escaped in the channel, or in the id
      scriptFrame('agent:"odd', { conversationId }, 2),
      scriptFrame('agent:message', { conversationId: 'a\\"b' }, 2),
      // no data members at all, and a status event without a conversation
      scriptFrame('agent:message', {}, 4),
      eventFrame('mcp:status', { servers: [] }),
    ];
    for (const frame of frames) {
      const event = fromFrame(frame)!;
      const parsed = JSON.parse(frame) as { channel: string; data: Record<string, unknown> };
      assert.equal(event.channel, parsed.channel, frame);
      assert.deepEqual(event.data, parsed.data, frame);
      if (event.conversationId !== undefined) {
        assert.equal(event.conversationId, parsed.data.conversationId, frame);
        assert.equal(event.seq, parsed.data.seq, frame);
      }
    }
    assert.equal(fromFrame(frames[0]!)!.conversationId, undefined);
    assert.equal(fromFrame(frames[2]!)!.conversationId, undefined);
    assert.equal(fromFrame(frames[3]!)!.conversationId, undefined);
  });

  it('answers null for what is not an event frame', () => {
    assert.equal(fromFrame('{"type":"pong"}'), null);
    assert.equal(fromFrame('not json'), null);
    assert.equal(fromFrame('{"type":"event","channel":"x","data":null}'), null);
  });
});
