import type { Server } from 'node:http';
import type { Socket } from 'node:net';

type WriteCallback = (error?: Error | null) => void;
type Chunks = Array<{ chunk: unknown; encoding: BufferEncoding }>;
interface WritableSocket extends Socket {
  _write(chunk: unknown, encoding: BufferEncoding, callback: WriteCallback): void;
  _writev?(chunks: Chunks, callback: WriteCallback): void;
}

/** The writes held in this turn of the event loop, in the order they were issued. */
let held: Array<() => void> = [];

function flush(): void {
  const writes = held;
  held = [];
  for (const write of writes) write();
}

function hold(write: () => void): void {
  held.push(write);
  if (held.length === 1) setImmediate(flush);
}

/**
 * Holds the bytes every HTTP connection of `server` writes until the end of the current turn
 * of the event loop (its check phase), then lets them all go, in order: the answers computed in
 * one turn leave together instead of one syscall between each handler's work.
 *
 * Why: a server answering many connections at once otherwise interleaves each answer's write
 * with the next request's handling. On a loopback or same-host peer (the bench's load
 * generator, a reverse proxy on the same machine) every such write wakes the peer, which
 * reads, replies and sleeps again before the next write wakes it again: measured under 50
 * connections, that wake-up ran inside the server's write and was ~15 % of the server's CPU,
 * and the server's CPU per request halved with the writes of one turn going out together.
 * The answers' state is untouched (a response is ended and 'finish'es as before, only once
 * its bytes are handed to the kernel); the delay is at most the rest of the turn.
 *
 * Sockets taken over by a WebSocket upgrade go back to writing at once: the event relay
 * decides its own write timing (one write per socket per tick).
 */
export function batchConnectionWrites(server: Server): void {
  server.on('connection', (socket: WritableSocket) => {
    const write = socket._write;
    const writev = socket._writev;
    socket._write = function (chunk, encoding, callback) {
      hold(() => write.call(this, chunk, encoding, callback));
    };
    if (writev) {
      socket._writev = function (chunks, callback) {
        hold(() => writev.call(this, chunks, callback));
      };
    }
  });
  server.on('upgrade', (_req, socket: WritableSocket) => {
    // Back to the prototype's methods (a write already held still goes out in order).
    delete (socket as Partial<WritableSocket>)._write;
    delete (socket as Partial<WritableSocket>)._writev;
  });
}
