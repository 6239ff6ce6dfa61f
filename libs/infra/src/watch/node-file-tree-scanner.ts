import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { FileTreeScanner, type TreeEntry, type WalkRequest } from '#core/ports/file-watcher.port.js';

export interface ScannerOptions {
  /** Folders read at the same time during a walk (helps on network volumes). */
  concurrency?: number;
}

/** Folder listing and tree walking on node:fs; symlinks are typed by their target, never followed. */
export class NodeFileTreeScanner extends FileTreeScanner {
  private readonly concurrency: number;

  constructor(options: ScannerOptions = {}) {
    super();
    this.concurrency = Math.max(1, options.concurrency ?? 8);
  }

  async listFolder(folder: string, ignore: (absolutePath: string) => boolean): Promise<TreeEntry[] | null> {
    const entries = await scan(folder, ignore);
    return entries && entries.map(({ name, type, path }) => ({ name, type, path }));
  }

  async walk(request: WalkRequest): Promise<{ count: number; truncated: boolean }> {
    const { root, ignore, limit, signal, onEntries } = request;
    const queue: string[] = [root];
    let count = 0;
    let truncated = false;
    let active = 0;
    const stopped = (): boolean => truncated || signal?.aborted === true;

    await new Promise<void>((done) => {
      const pump = (): void => {
        while (!stopped() && active < this.concurrency && queue.length > 0) {
          const folder = queue.shift()!;
          active++;
          void scan(folder, ignore)
            .then((entries) => {
              if (stopped() || !entries) return;
              let batch = entries;
              if (count + batch.length > limit) {
                batch = batch.slice(0, Math.max(0, limit - count));
                truncated = true;
              }
              count += batch.length;
              for (const entry of batch) if (entry.type === 'folder' && !entry.symlink) queue.push(entry.path);
              if (batch.length > 0) onEntries(batch.map(({ name, type, path }) => ({ name, type, path })));
            })
            .catch(() => undefined)
            .finally(() => {
              active--;
              pump();
            });
        }
        if (active === 0) done();
      };
      pump();
    });
    return { count, truncated };
  }
}

type ScannedEntry = TreeEntry & { symlink: boolean };

async function scan(folder: string, ignore: (p: string) => boolean): Promise<ScannedEntry[] | null> {
  let dirents: Dirent[];
  try {
    dirents = await readdir(folder, { withFileTypes: true });
  } catch {
    return null;
  }
  const entries: ScannedEntry[] = [];
  const links: string[] = [];
  for (const dirent of dirents) {
    const path = join(folder, dirent.name);
    if (ignore(path)) continue;
    if (dirent.isDirectory()) entries.push({ name: dirent.name, type: 'folder', path, symlink: false });
    else if (dirent.isFile()) entries.push({ name: dirent.name, type: 'file', path, symlink: false });
    else if (dirent.isSymbolicLink()) links.push(dirent.name);
  }
  if (links.length > 0) {
    const resolved = await Promise.all(links.map((name) => symlinkEntry(folder, name)));
    for (const entry of resolved) if (entry) entries.push(entry);
  }
  return entries;
}

/** A symlink typed by its target (never followed); null when dangling or neither file nor folder. */
async function symlinkEntry(folder: string, name: string): Promise<ScannedEntry | null> {
  const path = join(folder, name);
  try {
    const target = await stat(path);
    if (target.isDirectory()) return { name, type: 'folder', path, symlink: true };
    if (target.isFile()) return { name, type: 'file', path, symlink: true };
  } catch {
    /* dangling */
  }
  return null;
}
