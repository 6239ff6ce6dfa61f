import type { Duplex } from 'node:stream';

/**
 * Frame size limits of `/ws`. Before sign-in a client may send only a little (an `auth`
 * frame is tiny), so an unauthenticated socket cannot make the server receive and buffer a
 * large message; after sign-in the server-wide `maxPayload` applies (`ws` closes a bigger
 * frame with 1009 itself).
 */
export const UNAUTHENTICATED_MAX_FRAME_BYTES = 64 * 1024;
/** The server-wide limit (`maxPayload` of the WebSocket server): signed-in clients' frames. */
export const AUTHENTICATED_MAX_FRAME_BYTES = 1024 * 1024;

/** 1009: message too big (RFC 6455). */
const MESSAGE_TOO_BIG = 1009;
/** After the close frame and FIN are written, how long before the connection is dropped. */
const CLOSE_GRACE_MS = 1000;

/** What the cap uses of a `ws` WebSocket (its public API). */
export interface CappedSocket {
  close(code: number, reason: string): void;
  /** Stops reading from the connection. */
  pause(): void;
  terminate(): void;
}

const caps = new WeakMap<CappedSocket, () => void>();

/**
 * Caps what `socket` may send before it signs in, at `bytes` counted as they arrive on its
 * connection (the upgrade request's socket), before the WebSocket parser sees them. Past the
 * cap the socket is closed with 1009, no longer read and ended. Public APIs of `ws` and
 * `net` only: nothing depends on the library's internals.
 */
export function capBeforeSignIn(socket: CappedSocket, connection: Duplex, bytes: number): void {
  let received = 0;
  const onData = (chunk: Buffer): void => {
    received += chunk.length;
    if (received <= bytes) return;
    lift();
    socket.close(MESSAGE_TOO_BIG, 'Message too big');
    socket.pause();
    connection.end();
    setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref();
  };
  const lift = (): void => {
    connection.off('data', onData);
    caps.delete(socket);
  };
  connection.prependListener('data', onData);
  caps.set(socket, lift);
}

/** Lifts the cap of a socket that signed in (nothing when it had none). */
export function liftSignInCap(socket: CappedSocket): void {
  caps.get(socket)?.();
}
