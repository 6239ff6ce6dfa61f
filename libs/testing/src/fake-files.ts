import { basename, dirname, join, relative, sep } from 'node:path';
import { findRoot, normalizeRequest, relativeInside } from '#core/artifacts/path-rules.js';
import { DomainError } from '#core/errors/domain-error.js';
import {
  type DirEntry,
  type FileInfo,
  FileStore,
  type GuardedPath,
  type PathRequest,
} from '#core/ports/file-store.port.js';
import {
  FileTreeScanner,
  FileWatcher,
  type FolderWatch,
  type TreeEntry,
  type WalkRequest,
  type WatchListener,
  type WatchRequest,
  type FileChangeType,
} from '#core/ports/file-watcher.port.js';
import { ConsolidationLock, type MemoryFilesStatus, MemoryFiles } from '#core/ports/memory-files.port.js';
import { SpaceFolders } from '#core/ports/space-folders.port.js';
import { type TrashedItem, TrashBin } from '#core/ports/trash-bin.port.js';
import { type GrepMatch, type GrepOptions, WorkspaceSearch } from '#core/ports/workspace-search.port.js';

const under = (path: string, folder: string): boolean => path === folder || path.startsWith(folder + sep);

/** A GuardedPath for a path the test knows lies inside `root` (no symlinks in memory). */
export function guarded(root: string, path: string): GuardedPath {
  const relativePath = relative(root, path).split(sep).join('/');
  return { root, realRoot: root, path, relativePath, entry: path, real: path };
}

/**
 * Files in memory behind the same lexical path guard as the real store (no symlinks here):
 * anything outside the roots, a NUL byte, or the root itself unless allowed, is refused as
 * forbidden 'Access denied'. Writing a file needs its folder; `trash` keeps what it took.
 */
export class FakeFileStore extends FileStore {
  readonly files = new Map<string, Buffer>();
  readonly folders = new Set<string>(['/']);
  /** Entries moved to the trash, by their former path. */
  readonly trashed = new Map<string, Buffer | 'folder'>();
  private nextInode = 1;
  private readonly inodes = new Map<string, number>();

  /** Creates the folder and its parents. */
  addFolder(...paths: string[]): this {
    for (const path of paths) for (let p = path; !this.folders.has(p); p = dirname(p)) this.folders.add(p);
    return this;
  }

  /** Creates the file (and its folders). */
  addFile(path: string, content: string | Buffer): this {
    this.addFolder(dirname(path));
    this.files.set(path, Buffer.from(content));
    this.inodes.set(path, this.nextInode++);
    return this;
  }

  text(path: string): string | undefined {
    return this.files.get(path)?.toString('utf8');
  }

  async resolve(request: PathRequest): Promise<GuardedPath> {
    const deny = (): never => {
      throw DomainError.forbidden('Access denied');
    };
    if (request.roots.length === 0) deny();
    const target = normalizeRequest(request.path, request.base) ?? deny();
    const root = findRoot(request.roots, target, request.allowRoot ?? false) ?? deny();
    return guarded(root, target);
  }

  async stat(target: GuardedPath): Promise<FileInfo | null> {
    const file = this.files.get(target.real);
    if (file) return { kind: 'file', size: file.length, identity: `1:${this.inodes.get(target.real)}`, symlink: false };
    if (this.folders.has(target.real)) return { kind: 'folder', size: 0, identity: `1:${target.real}`, symlink: false };
    return null;
  }

  async readDir(folder: GuardedPath): Promise<DirEntry[]> {
    if (!this.folders.has(folder.real)) throw enoent(folder.real);
    const entries: DirEntry[] = [];
    for (const path of this.folders) {
      if (path !== folder.real && dirname(path) === folder.real) {
        entries.push({ name: basename(path), kind: 'folder', size: 0, symlink: false });
      }
    }
    for (const [path, data] of this.files) {
      if (dirname(path) === folder.real)
        entries.push({ name: basename(path), kind: 'file', size: data.length, symlink: false });
    }
    return entries;
  }

  async readHead(file: GuardedPath, bytes: number): Promise<Buffer> {
    return this.read(file).subarray(0, bytes);
  }

  async readFile(file: GuardedPath, maxBytes: number): Promise<Buffer | 'too-large'> {
    const data = this.read(file);
    return data.length > maxBytes ? 'too-large' : Buffer.from(data);
  }

  async writeAtomic(file: GuardedPath, content: string | Buffer): Promise<void> {
    this.write(file.real, Buffer.from(content));
  }

  async writeAtomicFrom(
    file: GuardedPath,
    chunks: AsyncIterable<Uint8Array>,
    maxBytes: number,
  ): Promise<number | 'too-large'> {
    const parts: Buffer[] = [];
    let size = 0;
    for await (const chunk of chunks) {
      size += chunk.length;
      if (size > maxBytes) return 'too-large';
      parts.push(Buffer.from(chunk));
    }
    this.write(file.real, Buffer.concat(parts));
    return size;
  }

  async openRead(file: GuardedPath): Promise<{ size: number; chunks: AsyncIterable<Buffer> }> {
    const data = Buffer.from(this.read(file));
    return {
      size: data.length,
      chunks: (async function* () {
        yield data;
      })(),
    };
  }

  async makeFolder(folder: GuardedPath): Promise<void> {
    if (this.files.has(folder.real)) throw Object.assign(new Error(`EEXIST: ${folder.real}`), { code: 'EEXIST' });
    if (!this.folders.has(dirname(folder.real))) throw enoent(dirname(folder.real));
    this.folders.add(folder.real);
  }

  async move(from: GuardedPath, to: GuardedPath): Promise<void> {
    if (!this.folders.has(dirname(to.real))) throw enoent(dirname(to.real));
    const taken = this.take(from.real);
    for (const [path, entry] of taken) {
      const moved = to.real + path.slice(from.real.length);
      if (entry === 'folder') this.folders.add(moved);
      else this.files.set(moved, entry);
    }
  }

  async trash(target: GuardedPath): Promise<void> {
    for (const [path, entry] of this.take(target.real)) this.trashed.set(path, entry);
  }

  private read(file: GuardedPath): Buffer {
    const data = this.files.get(file.real);
    if (!data)
      throw this.folders.has(file.real) ? Object.assign(new Error('EISDIR'), { code: 'EISDIR' }) : enoent(file.real);
    return data;
  }

  private write(path: string, data: Buffer): void {
    if (!this.folders.has(dirname(path))) throw enoent(dirname(path));
    if (this.folders.has(path)) throw Object.assign(new Error(`EISDIR: ${path}`), { code: 'EISDIR' });
    if (!this.inodes.has(path)) this.inodes.set(path, this.nextInode++);
    this.files.set(path, data);
  }

  /** Removes the entry and everything below it; answers what was removed, the entry first. */
  private take(path: string): Array<[string, Buffer | 'folder']> {
    if (!this.files.has(path) && !this.folders.has(path)) throw enoent(path);
    const taken: Array<[string, Buffer | 'folder']> = [];
    for (const folder of [...this.folders].sort()) {
      if (under(folder, path)) {
        taken.push([folder, 'folder']);
        this.folders.delete(folder);
      }
    }
    for (const [file, data] of [...this.files]) {
      if (under(file, path)) {
        taken.push([file, data]);
        this.files.delete(file);
        this.inodes.delete(file);
      }
    }
    return taken;
  }
}

function enoent(path: string): Error {
  return Object.assign(new Error(`ENOENT: no such file or directory, ${path}`), { code: 'ENOENT' });
}

/** Watches the test drives: `emit` delivers a change to the watch of that root (ignored paths are dropped). */
export class FakeFileWatcher extends FileWatcher {
  readonly active = new Map<string, { request: WatchRequest; listener: WatchListener }>();
  /** Roots whose watch fails to open (a missing folder). */
  readonly failing = new Set<string>();

  async watch(request: WatchRequest, listener: WatchListener): Promise<FolderWatch> {
    if (this.failing.has(request.root)) throw Object.assign(new Error(`ENOENT: ${request.root}`), { code: 'ENOENT' });
    const watch = { request, listener };
    this.active.set(request.root, watch);
    return {
      close: async () => {
        if (this.active.get(request.root) === watch) this.active.delete(request.root);
      },
    };
  }

  /** Delivers a change; false when nobody watches `root` or the path is ignored. */
  emit(root: string, type: FileChangeType, path: string): boolean {
    const watch = this.active.get(root);
    if (!watch || watch.request.ignore(path)) return false;
    watch.listener.change({ type, path });
    return true;
  }
}

/** Lists and walks the folders of a FakeFileStore. */
export class FakeFileTreeScanner extends FileTreeScanner {
  constructor(private readonly store: FakeFileStore) {
    super();
  }

  async listFolder(folder: string, ignore: (absolutePath: string) => boolean): Promise<TreeEntry[] | null> {
    if (!this.store.folders.has(folder)) return null;
    const entries = await this.store.readDir(guarded(folder, folder));
    return entries
      .map((e) => ({ name: e.name, type: e.kind, path: join(folder, e.name) }))
      .filter((e) => !ignore(e.path));
  }

  async walk(request: WalkRequest): Promise<{ count: number; truncated: boolean }> {
    const all: TreeEntry[] = [];
    const visit = async (folder: string): Promise<void> => {
      for (const entry of (await this.listFolder(folder, request.ignore)) ?? []) {
        if (request.signal?.aborted) return;
        all.push(entry);
        if (entry.type === 'folder') await visit(entry.path);
      }
    };
    await visit(request.root);
    const entries = all.slice(0, request.limit);
    if (entries.length > 0) request.onEntries(entries);
    return { count: entries.length, truncated: all.length > request.limit };
  }
}

/** Glob (`*`, `**`, `?`) and grep over the files of a FakeFileStore, skipping `.git`, `node_modules` and `.svc`. */
export class FakeWorkspaceSearch extends WorkspaceSearch {
  constructor(private readonly store: FakeFileStore) {
    super();
  }

  async glob(
    folder: GuardedPath,
    pattern: string,
    maxResults: number,
  ): Promise<{ paths: string[]; truncated: boolean }> {
    const matcher = globToRegExp(pattern);
    const paths = this.filesIn(folder.real).filter((rel) => matcher.test(rel));
    return { paths: paths.slice(0, maxResults), truncated: paths.length > maxResults };
  }

  async grep(
    folder: GuardedPath,
    pattern: RegExp,
    options: GrepOptions,
  ): Promise<{ matches: GrepMatch[]; truncated: boolean }> {
    const only = options.glob ? globToRegExp(options.glob) : null;
    const regex = new RegExp(
      pattern.source,
      options.caseInsensitive ? `${pattern.flags.replace('i', '')}i` : pattern.flags,
    );
    const matches: GrepMatch[] = [];
    for (const file of this.filesIn(folder.real)) {
      if (only && !only.test(file)) continue;
      const lines = this.store.files.get(join(folder.real, file))!.toString('utf8').split('\n');
      for (let i = 0; i < lines.length; i++) {
        regex.lastIndex = 0;
        if (!regex.test(lines[i])) continue;
        if (matches.length === options.maxResults) return { matches, truncated: true };
        matches.push({ file, line: i + 1, text: lines[i] });
      }
    }
    return { matches, truncated: false };
  }

  private filesIn(folder: string): string[] {
    return [...this.store.files.keys()]
      .map((path) => relativeInside(folder, path))
      .filter((rel): rel is string => !!rel)
      .map((rel) => rel.split(sep).join('/'))
      .filter((rel) => !rel.split('/').some((s) => s === '.git' || s === 'node_modules' || s === '.svc'))
      .sort();
  }
}

function globToRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*' && pattern[i + 1] === '*') {
      source += pattern[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += pattern[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/** Memory status by working folder, set by the test; `removeInternal` records what it removed. */
export class FakeMemoryFiles extends MemoryFiles {
  readonly statuses = new Map<string, MemoryFilesStatus>();
  readonly removed: string[] = [];

  async readStatus(workingFolder: string): Promise<MemoryFilesStatus> {
    return (
      this.statuses.get(workingFolder) ?? {
        exists: false,
        totalBytes: 0,
        topicCount: 0,
        lastConsolidatedAt: null,
        lastAttempt: null,
      }
    );
  }

  async removeInternal(target: GuardedPath): Promise<void> {
    if (
      !under(target.real, join(target.realRoot, '.svc', 'memory')) ||
      target.real === join(target.realRoot, '.svc', 'memory')
    ) {
      throw new Error(`refusing to remove ${target.real}: not inside .svc/memory`);
    }
    this.removed.push(target.real);
  }
}

/** One lease per space held by a token until released or expired on the given clock. */
export class FakeConsolidationLock extends ConsolidationLock {
  readonly leases = new Map<string, { token: string; expiresAt: number }>();

  constructor(private readonly now: () => number = Date.now) {
    super();
  }

  async acquire(spaceId: string, token: string, ttlMs: number): Promise<boolean> {
    if (this.holder(spaceId) !== null) return false;
    this.leases.set(spaceId, { token, expiresAt: this.now() + ttlMs });
    return true;
  }

  async claim(spaceId: string, token: string, ttlMs: number): Promise<boolean> {
    const holder = this.holder(spaceId);
    if (holder !== null && holder !== token) return false;
    this.leases.set(spaceId, { token, expiresAt: this.now() + ttlMs });
    return true;
  }

  async renew(spaceId: string, token: string, ttlMs: number): Promise<boolean> {
    if (this.holder(spaceId) !== token) return false;
    this.leases.set(spaceId, { token, expiresAt: this.now() + ttlMs });
    return true;
  }

  async release(spaceId: string, token: string): Promise<void> {
    if (this.holder(spaceId) === token) this.leases.delete(spaceId);
  }

  async isConsolidating(spaceId: string): Promise<boolean> {
    return this.holder(spaceId) !== null;
  }

  private holder(spaceId: string): string | null {
    const lease = this.leases.get(spaceId);
    return lease && lease.expiresAt > this.now() ? lease.token : null;
  }
}

/** SpaceFolders over the tree of a FakeFileStore, for services that use both ports on one disk. */
export class FakeStoreFolders extends SpaceFolders {
  readonly removed: string[] = [];

  constructor(private readonly store: FakeFileStore) {
    super();
  }

  async ensureFolder(path: string): Promise<boolean> {
    if (this.store.folders.has(path)) return false;
    this.store.addFolder(path);
    return true;
  }

  async isFolder(path: string): Promise<boolean> {
    return this.store.folders.has(path);
  }

  async canonical(path: string): Promise<string> {
    return path;
  }

  async removeRecursive(path: string): Promise<void> {
    this.removed.push(path);
    if (this.store.folders.has(path) || this.store.files.has(path)) await this.store.trash(guarded(path, path));
    for (const trashed of [...this.store.trashed.keys()]) if (under(trashed, path)) this.store.trashed.delete(trashed);
  }

  async removeOrphanedTempFiles(path: string): Promise<number> {
    let count = 0;
    for (const file of [...this.store.files.keys()]) {
      if (under(file, path) && file.endsWith('.svc-tmp')) {
        this.store.files.delete(file);
        count++;
      }
    }
    return count;
  }
}

/**
 * The data folder's trash in memory, beside a FakeFileStore: `put` files an entry (a file's
 * content, or a folder) as `FileStore.trash` would have; `restore` writes it back into the store.
 */
export class FakeTrashBin extends TrashBin {
  readonly entries = new Map<string, { item: TrashedItem; content: Buffer | 'folder' }>();

  constructor(private readonly store: FakeFileStore) {
    super();
  }

  put(id: string, originalPath: string, deletedAt: Date, content: string | 'folder'): this {
    const body = content === 'folder' ? 'folder' : Buffer.from(content);
    this.entries.set(id, {
      item: {
        id,
        originalPath,
        deletedAt,
        recordedAt: deletedAt.getTime(),
        kind: body === 'folder' ? 'folder' : 'file',
        size: body === 'folder' ? 0 : body.length,
      },
      content: body,
    });
    return this;
  }

  async list(): Promise<TrashedItem[]> {
    return [...this.entries.values()].map((e) => ({ ...e.item }));
  }

  async get(id: string): Promise<TrashedItem | null> {
    const entry = this.entries.get(id);
    return entry ? { ...entry.item } : null;
  }

  async restore(id: string, destination: GuardedPath): Promise<void> {
    const entry = this.entries.get(id);
    if (!entry) throw DomainError.notFound('Not in the trash');
    if (!this.store.folders.has(dirname(destination.real))) throw enoent(dirname(destination.real));
    if (entry.content === 'folder') this.store.folders.add(destination.real);
    else this.store.files.set(destination.real, entry.content);
    this.entries.delete(id);
  }

  async purge(id: string): Promise<void> {
    if (!this.entries.delete(id)) throw DomainError.notFound('Not in the trash');
  }
}
