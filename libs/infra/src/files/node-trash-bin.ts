import { lstat, readdir, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { isPlainName } from '#core/artifacts/path-rules.js';
import { DomainError } from '#core/errors/domain-error.js';
import type { GuardedPath } from '#core/ports/file-store.port.js';
import { type TrashedItem, TrashBin } from '#core/ports/trash-bin.port.js';
import { atEntry } from './anchored-folder.js';
import { mapped, moveEntry } from './node-file-store.js';

const INFO_SUFFIX = '.trashinfo';
const GONE = 'Not in the trash';

export interface NodeTrashBinOptions {
  /** The trash folder (`<dataDir>/trash`), holding `files/` and `info/`; the one NodeFileStore fills. */
  trashDir: string;
  /** Rename primitive; tests replace it to simulate a cross-device move. */
  rename?: (from: string, to: string) => Promise<void>;
}

/**
 * A `.trashinfo` record (freedesktop trash specification): its `Path` unescaped and its
 * `DeletionDate` (local time, as `trashDate` writes it), or null when it is not one we can
 * use (no `[Trash Info]` group, a relative or badly escaped path, no valid date).
 */
export function parseTrashInfo(text: string): { path: string; deletedAt: Date } | null {
  const lines = text.split(/\r?\n/);
  const start = lines.findIndex((line) => line.trim() === '[Trash Info]');
  if (start < 0) return null;
  let path: string | undefined;
  let date: string | undefined;
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('[')) break;
    const eq = line.indexOf('=');
    if (eq < 0) continue;
    const key = line.slice(0, eq).trim();
    const value = line.slice(eq + 1);
    if (key === 'Path' && path === undefined) path = value;
    else if (key === 'DeletionDate' && date === undefined) date = value.trim();
  }
  if (path === undefined || date === undefined) return null;
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return null;
  }
  if (!isAbsolute(decoded) || decoded.includes('\0')) return null;
  const deletedAt = parseTrashDate(date);
  return deletedAt ? { path: decoded, deletedAt } : null;
}

/** `YYYY-MM-DDThh:mm:ss` in local time (the specification's form), or null. */
export function parseTrashDate(value: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/.exec(value);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const date = new Date(y, mo - 1, d, h, mi, s);
  // Out-of-range parts (month 13, second 61) roll over in Date: refuse them instead.
  if (date.getFullYear() !== y || date.getMonth() !== mo - 1 || date.getDate() !== d || date.getHours() !== h)
    return null;
  if (date.getMinutes() !== mi || date.getSeconds() !== s) return null;
  return date;
}

const isMissing = (err: unknown): boolean =>
  ['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException | undefined)?.code ?? '');

/** The data folder's trash on the local file system (a shared volume when several replicas serve). */
export class NodeTrashBin extends TrashBin {
  private readonly filesDir: string;
  private readonly infoDir: string;
  private readonly renameImpl: (from: string, to: string) => Promise<void>;

  constructor(options: NodeTrashBinOptions) {
    super();
    this.filesDir = join(options.trashDir, 'files');
    this.infoDir = join(options.trashDir, 'info');
    this.renameImpl = options.rename ?? rename;
  }

  list(): Promise<TrashedItem[]> {
    return mapped(async () => {
      let names: string[];
      try {
        names = await readdir(this.infoDir);
      } catch (err) {
        if (isMissing(err)) return [];
        throw err;
      }
      const out: TrashedItem[] = [];
      for (const name of names) {
        if (!name.endsWith(INFO_SUFFIX)) continue;
        const item = await this.read(name.slice(0, -INFO_SUFFIX.length));
        if (item) out.push(item);
      }
      return out;
    });
  }

  /** The entry's content in the trash; NOT_FOUND when it is gone. */
  private async existingContentOf(id: string): Promise<string> {
    const source = this.contentOf(id);
    try {
      await lstat(source);
    } catch (err) {
      if (isMissing(err)) throw DomainError.notFound(GONE);
      throw err;
    }
    return source;
  }

  get(id: string): Promise<TrashedItem | null> {
    return mapped(() => this.read(id));
  }

  restore(id: string, destination: GuardedPath): Promise<void> {
    return mapped(async () => {
      const source = await this.existingContentOf(id);
      await atEntry(destination.entry, destination.realRoot, (to) => moveEntry(source, to, this.renameImpl));
      // The content is back: the record goes (a record left behind by a crash here is never listed).
      await unlink(this.recordOf(id)).catch(() => undefined);
    });
  }

  purge(id: string): Promise<void> {
    return mapped(async () => {
      const source = await this.existingContentOf(id);
      await rm(source, { recursive: true, force: true });
      await unlink(this.recordOf(id)).catch(() => undefined);
    });
  }

  /** The entry, when `id` is a plain name with both a usable record and its content. */
  private async read(id: string): Promise<TrashedItem | null> {
    if (!isPlainName(id)) return null;
    let text: string;
    let recordedAt: number;
    let own;
    try {
      text = await readFile(this.recordOf(id), 'utf8');
      recordedAt = (await stat(this.recordOf(id))).mtimeMs;
      own = await lstat(this.contentOf(id));
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
    const info = parseTrashInfo(text);
    if (!info) return null;
    const kind = own.isDirectory() ? 'folder' : own.isFile() ? 'file' : 'other';
    return {
      id,
      originalPath: info.path,
      deletedAt: info.deletedAt,
      recordedAt,
      kind,
      size: kind === 'file' ? own.size : 0,
    };
  }

  private contentOf(id: string): string {
    if (!isPlainName(id)) throw DomainError.notFound(GONE);
    return join(this.filesDir, id);
  }

  private recordOf(id: string): string {
    if (!isPlainName(id)) throw DomainError.notFound(GONE);
    return join(this.infoDir, `${id}${INFO_SUFFIX}`);
  }
}
