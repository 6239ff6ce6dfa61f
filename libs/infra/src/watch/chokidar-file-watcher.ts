import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { type FSWatcher, watch } from 'chokidar';
import {
  type RawFileChange,
  FILE_CHANGE_TYPES,
  type FileChangeType,
  FileWatcher,
  type FolderWatch,
  type WatchListener,
  type WatchRequest,
} from '#core/ports/file-watcher.port.js';

export interface ChokidarWatcherOptions {
  /**
   * Poll instead of using the native watcher (inotify, FSEvents): for network volumes (NFS,
   * SMB, some container volumes) where native events do not arrive. Costs CPU per file.
   */
  usePolling?: boolean;
  /** Polling interval (ms) when polling. */
  pollIntervalMs?: number;
  /**
   * How long after a folder appears its entries are compared with what chokidar tracks
   * (see `NewFolderCheck`), and the pause between the later comparisons.
   */
  newFolderCheckMs?: number;
}

const TYPES: ReadonlySet<string> = new Set(FILE_CHANGE_TYPES);

/** What the watching thread is told. */
export type ToWatchThread =
  { type: 'watch'; id: number; root: string; options: ChokidarWatcherOptions } | { type: 'close'; id: number };

/** What the watching thread reports. */
export type FromWatchThread =
  | { type: 'ready'; id: number }
  | { type: 'failed'; id: number; message: string }
  | { type: 'changes'; id: number; changes: RawFileChange[] }
  | { type: 'error'; id: number; message: string }
  | { type: 'closed'; id: number };

interface OpenWatch {
  request: WatchRequest;
  listener: WatchListener;
  opened: { resolve: () => void; reject: (err: Error) => void } | null;
  closed: (() => void) | null;
}

/**
 * Recursive watching with chokidar, in a thread of its own (one for every watch of this
 * watcher): chokidar reads every folder that appears, and stats its entries, when it starts
 * and whenever a folder is created or moved in, which on a big tree, or a folder renamed
 * back and forth in a loop, would otherwise take the event loop for seconds. The thread sends
 * changes in batches. It skips what the artifact rules skip (`ignoreUnder`: `.git`,
 * `node_modules`, the top `.svc`, atomic-write temporaries; it cannot run the caller's
 * function), and the caller's `ignore` is applied to every change it reports.
 */
export class ChokidarFileWatcher extends FileWatcher {
  private worker: Worker | null = null;
  private readonly open = new Map<number, OpenWatch>();
  private nextId = 1;

  constructor(private readonly options: ChokidarWatcherOptions = {}) {
    super();
  }

  async watch(request: WatchRequest, listener: WatchListener): Promise<FolderWatch> {
    const root = resolve(request.root);
    const info = await stat(root);
    if (!info.isDirectory()) throw new Error(`not a folder: ${root}`);
    const id = this.nextId++;
    const entry: OpenWatch = { request, listener, opened: null, closed: null };
    const worker = this.thread();
    this.open.set(id, entry);
    await new Promise<void>((resolveOpened, reject) => {
      entry.opened = { resolve: resolveOpened, reject };
      worker.postMessage({ type: 'watch', id, root, options: this.options } satisfies ToWatchThread);
    });
    return {
      close: async () => {
        if (!this.open.has(id)) return;
        const closed = new Promise<void>((done) => {
          entry.closed = done;
          setTimeout(done, 5_000).unref();
        });
        worker.postMessage({ type: 'close', id } satisfies ToWatchThread);
        await closed;
        this.open.delete(id);
        if (this.open.size === 0 && this.worker === worker) {
          this.worker = null;
          await worker.terminate();
        }
      },
    };
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL('./chokidar-watch.worker.js', import.meta.url));
    worker.unref();
    worker.on('message', (message: FromWatchThread) => this.onMessage(message));
    const lost = (why: string): void => {
      if (this.worker !== worker) return;
      this.worker = null;
      for (const [id, entry] of [...this.open]) {
        if (entry.opened) {
          this.open.delete(id);
          entry.opened.reject(new Error(why));
        } else if (entry.closed) {
          entry.closed();
        } else {
          this.open.delete(id);
          entry.listener.error(new Error(why));
        }
      }
    };
    worker.on('error', (err) => lost(`the file watching thread failed: ${err.message}`));
    worker.on('exit', (code) => lost(`the file watching thread stopped (exit code ${code})`));
    this.worker = worker;
    return worker;
  }

  private onMessage(message: FromWatchThread): void {
    const entry = this.open.get(message.id);
    if (!entry) return;
    switch (message.type) {
      case 'ready':
        entry.opened?.resolve();
        entry.opened = null;
        break;
      case 'failed':
        this.open.delete(message.id);
        entry.opened?.reject(new Error(message.message));
        break;
      case 'changes':
        if (entry.closed) return;
        for (const change of message.changes) {
          if (!entry.request.ignore(change.path)) entry.listener.change(change);
        }
        break;
      case 'error':
        if (!entry.closed) entry.listener.error(new Error(message.message));
        break;
      case 'closed':
        entry.closed?.();
        break;
    }
  }
}

/**
 * Recursive watching with chokidar in the current thread (what the watching thread runs):
 * existing entries are not reported (`ignoreInitial`), writes are reported as they happen
 * (`awaitWriteFinish` off: the batcher absorbs bursts), symlinks are not followed (no cycles,
 * nothing outside the folder), and ignored folders are never descended into, so `.git` or
 * `node_modules` cost no watches.
 */
export class InThreadChokidarWatcher extends FileWatcher {
  constructor(private readonly options: ChokidarWatcherOptions = {}) {
    super();
  }

  async watch(request: WatchRequest, listener: WatchListener): Promise<FolderWatch> {
    const root = resolve(request.root);
    const info = await stat(root);
    if (!info.isDirectory()) throw new Error(`not a folder: ${root}`);
    const polling = this.options.usePolling === true;
    const watcher = watch(root, {
      persistent: true,
      ignoreInitial: true,
      followSymlinks: false,
      awaitWriteFinish: false,
      ignorePermissionErrors: true,
      usePolling: polling,
      ...(polling
        ? { interval: this.options.pollIntervalMs ?? 1_000, binaryInterval: this.options.pollIntervalMs ?? 1_000 }
        : {}),
      ignored: (path: string) => request.ignore(resolve(path)),
    });
    let closed = false;
    // chokidar reports symlinks found by the initial scan despite `ignoreInitial`: only what
    // happens after `ready` is a change.
    let ready = false;
    const checks = new NewFolderCheck(
      watcher,
      request.ignore,
      this.options.newFolderCheckMs ?? 1_000,
      (folder, missed) => {
        if (!closed) listener.error(new Error(`the watcher missed ${missed} new entries in ${folder}`));
      },
    );
    watcher.on('all', (event: string, path: string) => {
      if (closed || !ready || !TYPES.has(event)) return;
      const absolute = resolve(path);
      if (event === 'addDir' && !polling) checks.schedule(absolute);
      listener.change({ type: event as FileChangeType, path: absolute });
    });
    await new Promise<void>((done, fail) => {
      const onError = (err: unknown): void => fail(err instanceof Error ? err : new Error(String(err)));
      watcher.once('error', onError);
      watcher.once('ready', () => {
        watcher.off('error', onError);
        ready = true;
        done();
      });
    }).catch(async (err: Error) => {
      await watcher.close();
      throw err;
    });
    watcher.on('error', (err: unknown) => {
      if (!closed) listener.error(err instanceof Error ? err : new Error(String(err)));
    });
    return {
      close: async () => {
        closed = true;
        checks.cancel();
        await watcher.close();
      },
    };
  }
}

/** The chokidar internals the check reads (declared by chokidar's own typings). */
type ChokidarInternals = Pick<FSWatcher, '_watched' | '_isIgnored'>;

/**
 * chokidar reads a new folder before it starts watching it, so an entry created in between
 * (`mkdir -p a/b && touch a/b/f` by a tool, say) is never reported, and if it is a folder,
 * nothing in it ever is. After a folder appears, its entries on disk are compared with those
 * chokidar tracks; entries still untracked after chokidar has stopped catching up (it may be
 * busy with a burst) are reported as lost events, which makes the service resync the space
 * and restart its watcher.
 */
class NewFolderCheck {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly watcher: FSWatcher,
    private readonly ignore: (absolutePath: string) => boolean,
    private readonly delayMs: number,
    private readonly onMissed: (folder: string, count: number) => void,
  ) {}

  schedule(folder: string, attempt = 0, previous: number | null = null): void {
    if (this.timers.has(folder) && attempt === 0) return;
    const timer = setTimeout(
      () => {
        this.timers.delete(folder);
        void this.check(folder, attempt, previous);
      },
      this.delayMs * (attempt === 0 ? 1 : 2),
    );
    timer.unref();
    this.timers.set(folder, timer);
  }

  cancel(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private async check(folder: string, attempt: number, previous: number | null): Promise<void> {
    const internals = this.watcher as unknown as ChokidarInternals;
    if (this.watcher.closed || typeof internals._watched?.get !== 'function') return;
    let names: string[];
    try {
      names = (await readdir(folder, { withFileTypes: true }))
        .filter((d) => !d.isSymbolicLink() && (d.isFile() || d.isDirectory()))
        .map((d) => d.name);
    } catch {
      return; // gone again
    }
    const tracked = internals._watched.get(folder);
    if (!tracked || this.watcher.closed) return;
    const missing = names.filter((name) => {
      const path = join(folder, name);
      return !tracked.has(name) && !this.ignore(path) && !internals._isIgnored(path);
    }).length;
    if (missing === 0) return;
    // Still catching up (the count of tracked entries moves): look again later.
    const size = tracked.items.size;
    if (attempt < 5 && (previous === null || size !== previous)) {
      this.schedule(folder, attempt + 1, size);
      return;
    }
    this.onMissed(folder, missing);
  }
}
