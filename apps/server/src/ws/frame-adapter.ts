import type { INestApplicationContext } from '@nestjs/common';
import { WsAdapter } from '@nestjs/platform-ws';

/** Every well-formed client frame reaches the gateway's single `frame` handler. */
export const FRAME_EVENT = 'frame';

export interface ClientFrame {
  type: string;
  payload?: unknown;
}

/**
 * The event stream's frames (docs/api.md, "Events") are `{type, payload}`, not Nest's `{event, data}`. Invalid JSON and
 * non-object frames are dropped here (the event stream's rules ignore them); ordering and unknown
 * types are the gateway's business.
 */
export function createFrameAdapter(app: INestApplicationContext): WsAdapter {
  return new WsAdapter(app, {
    messageParser: (raw: unknown) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(String(raw));
      } catch {
        return undefined;
      }
      if (!parsed || typeof parsed !== 'object' || typeof (parsed as ClientFrame).type !== 'string') return undefined;
      return { event: FRAME_EVENT, data: parsed };
    },
  } as never);
}
