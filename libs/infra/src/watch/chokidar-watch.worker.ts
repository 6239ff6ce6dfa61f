import { parentPort } from 'node:worker_threads';
import { ignoreUnder } from '#core/artifacts/watch-events.js';
import type { FolderWatch, RawFileChange } from '#core/ports/file-watcher.port.js';
import { type FromWatchThread, InThreadChokidarWatcher, type ToWatchThread } from './chokidar-file-watcher.js';

/** Changes sent together at most, and how long a change waits for others before it is sent. */
const MAX_CHANGES_PER_MESSAGE = 500;
const SEND_AFTER_MS = 25;

/** The watching thread of ChokidarFileWatcher: one chokidar watcher per watch it is asked for. */
const port = parentPort!;
const send = (message: FromWatchThread): void => port.postMessage(message);
const watches = new Map<number, Promise<FolderWatch | null>>();

function open(id: number, root: string, options: ToWatchThread & { type: 'watch' }): void {
  let pending: RawFileChange[] = [];
  let timer: ReturnType<typeof setTimeout> | null = null;
  const flush = (): void => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (pending.length === 0) return;
    send({ type: 'changes', id, changes: pending });
    pending = [];
  };
  const opened = new InThreadChokidarWatcher(options.options)
    .watch(
      { root, ignore: ignoreUnder(root) },
      {
        change: (change) => {
          pending.push({ type: change.type, path: change.path });
          if (pending.length >= MAX_CHANGES_PER_MESSAGE) flush();
          else timer ??= setTimeout(flush, SEND_AFTER_MS);
        },
        error: (err) => {
          flush();
          send({ type: 'error', id, message: err.message });
        },
      },
    )
    .then(
      (watch) => {
        send({ type: 'ready', id });
        return {
          close: async () => {
            await watch.close();
            flush();
          },
        };
      },
      (err: Error) => {
        send({ type: 'failed', id, message: err.message });
        return null;
      },
    );
  watches.set(id, opened);
}

port.on('message', (message: ToWatchThread) => {
  if (message.type === 'watch') {
    open(message.id, message.root, message);
    return;
  }
  const opened = watches.get(message.id);
  watches.delete(message.id);
  void (async () => {
    const watch = await opened;
    await watch?.close().catch(() => undefined);
    send({ type: 'closed', id: message.id });
  })();
});
