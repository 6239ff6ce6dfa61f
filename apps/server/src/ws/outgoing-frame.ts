/**
 * One frame on its way to any number of sockets, prepared at most once whatever their count:
 * its UTF-8 payload (for `ws`'s own `send`) and the whole WebSocket frame around it (for
 * sockets the gateway writes to directly; see `EventsGateway.flush`).
 */
export class OutgoingFrame {
  private payloadBytes: Buffer | null = null;
  private wireBytes: Buffer | null = null;

  constructor(readonly text: string) {}

  payload(): Buffer {
    return (this.payloadBytes ??= Buffer.from(this.text, 'utf8'));
  }

  wire(): Buffer {
    return (this.wireBytes ??= textFrame(this.text));
  }
}

/**
 * A final, unmasked text frame (RFC 6455 §5.2: FIN + opcode 1; a server never masks) holding
 * `text`: the same bytes `ws` would write for it, built once instead of once per socket.
 */
export function textFrame(text: string): Buffer {
  const length = Buffer.byteLength(text, 'utf8');
  const header = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(header + length);
  frame[0] = 0x81;
  if (length < 126) {
    frame[1] = length;
  } else if (length < 65_536) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
    frame.writeUInt32BE(length >>> 0, 6);
  }
  frame.write(text, header, 'utf8');
  return frame;
}
