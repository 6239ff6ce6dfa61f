/**
 * Frame size limits of `/ws`. Before sign-in a client may send only small frames (an `auth`
 * frame is tiny), so an unauthenticated socket cannot make the server buffer large messages;
 * after sign-in the server-wide `maxPayload` applies. A frame over the limit closes the
 * socket with 1009 (message too big), by the `ws` library itself, before it is buffered.
 */
export const UNAUTHENTICATED_MAX_FRAME_BYTES = 64 * 1024;
/** The server-wide limit (`maxPayload` of the WebSocket server): signed-in clients' frames. */
export const AUTHENTICATED_MAX_FRAME_BYTES = 1024 * 1024;

/** The `ws` socket's frame parser, whose limit is per socket (not a public option of `ws`). */
interface WithReceiver {
  _receiver?: { _maxPayload?: unknown } | null;
}

/** Sets the largest frame this socket accepts; false when the `ws` internals are not there. */
export function setFrameLimit(socket: unknown, bytes: number): boolean {
  const receiver = (socket as WithReceiver)._receiver;
  if (!receiver || typeof receiver._maxPayload !== 'number') return false;
  receiver._maxPayload = bytes;
  return true;
}
