import { type BusEvent, eventFrame } from '#contracts/events.js';

/** Serializes an event into its wire frame; done once per event, never per client. */
export const toFrame = eventFrame;

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
