import type { BusEvent } from '#contracts/events.js';

export function fromFrame(frame: string): BusEvent | null {
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
