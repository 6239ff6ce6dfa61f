import type { BusEvent } from '#contracts/events.js';

const FRAME_HEAD = '{"type":"event","channel":"';
const DATA_HEAD = '","data":{';
const SEQ_KEY = ',"seq":';
const CONVERSATION_KEY = '"conversationId":"';

/**
 * A conversation's event as the log's script frames it (`RedisEventLog.appendAndPublish`): the
 * channel first, and the data's last two members its conversationId and the seq the script
 * spliced in. Read from the text at both ends; the data is decoded only if a handler reads it
 * (the gateway does not for a delta: its audience, conversation and seq are all it needs).
 */
class ScannedEvent implements BusEvent {
  private decoded: Record<string, unknown> | undefined;

  constructor(
    readonly channel: string,
    readonly conversationId: string,
    readonly seq: number,
    private readonly frame: string,
  ) {}

  get data(): Record<string, unknown> {
    this.decoded ??= (JSON.parse(this.frame) as { data: Record<string, unknown> }).data;
    return this.decoded;
  }
}

/**
 * The frame's channel, conversation and seq without decoding it, or null where it is not laid
 * out as the script writes conversation events (then `fromFrame` decodes it whole). Sound
 * because the frame is JSON whose last member is `data` and data's last is `seq`: the text
 * ends `"seq":<digits>}}` only then, and the string just before that `,` is data's member
 * before seq (a `"` inside a string is always escaped, so `,"conversationId":"` cannot start
 * inside one).
 */
function scannedEvent(frame: string): ScannedEvent | null {
  if (!frame.startsWith(FRAME_HEAD) || !frame.endsWith('}}')) return null;
  const channelEnd = frame.indexOf('"', FRAME_HEAD.length);
  if (channelEnd < 0 || !frame.startsWith(DATA_HEAD, channelEnd)) return null;
  const channel = frame.slice(FRAME_HEAD.length, channelEnd);
  if (channel.includes('\\')) return null;
  const seqAt = frame.lastIndexOf(SEQ_KEY);
  const digitsEnd = frame.length - 2;
  if (seqAt < 0 || digitsEnd - (seqAt + SEQ_KEY.length) > 16) return null;
  let seq = 0;
  for (let i = seqAt + SEQ_KEY.length; i < digitsEnd; i++) {
    const digit = frame.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return null;
    seq = seq * 10 + digit;
  }
  if (digitsEnd === seqAt + SEQ_KEY.length || seq > Number.MAX_SAFE_INTEGER) return null;
  if (frame.charCodeAt(seqAt - 1) !== 34 /* " */) return null;
  const keyAt = frame.lastIndexOf(CONVERSATION_KEY, seqAt);
  const idStart = keyAt + CONVERSATION_KEY.length;
  if (keyAt < 0 || (frame[keyAt - 1] !== ',' && frame[keyAt - 1] !== '{')) return null;
  const conversationId = frame.slice(idStart, seqAt - 1);
  if (conversationId.includes('"') || conversationId.includes('\\')) return null;
  return new ScannedEvent(channel, conversationId, seq, frame);
}

export function fromFrame(frame: string): BusEvent | null {
  const scanned = scannedEvent(frame);
  if (scanned) return scanned;
  try {
    const parsed = JSON.parse(frame) as { type?: string; channel?: unknown; data?: unknown };
    if (
      parsed.type !== 'event' ||
      typeof parsed.channel !== 'string' ||
      typeof parsed.data !== 'object' ||
      !parsed.data
    ) {
      return null;
    }
    return { channel: parsed.channel, data: parsed.data as Record<string, unknown> };
  } catch {
    return null;
  }
}

/**
 * The frames one bus message carries: one, or several joined by "\n" (a batch of one
 * conversation's events, in seq order: `RedisEventLog.appendAndPublish`). JSON text never holds
 * a raw newline, so the split cannot cut a frame.
 */
export function busFrames(message: string): string[] {
  return message.includes('\n') ? message.split('\n') : [message];
}
