import { createReadStream } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import picomatch from 'picomatch';
import type { GuardedPath } from '#core/ports/file-store.port.js';
import { type GrepMatch, type GrepOptions, WorkspaceSearch } from '#core/ports/workspace-search.port.js';
import { type EntryAt, inFolder, READ_NO_FOLLOW } from '../files/anchored-folder.js';

/** Folders never searched, wherever they are. */
const SKIPPED_FOLDERS = new Set(['.git', 'node_modules', '.svc']);
const MAX_GREP_FILE_BYTES = 5 * 1024 * 1024;
/** Entries one search looks at before it stops (a bound on work, reported as truncated). */
const MAX_WALKED_ENTRIES = 200_000;

interface FoundFile {
  /** Relative to the searched folder, forward slashes. */
  rel: string;
  mtimeMs: number;
}

/**
 * Every regular file under `folder`, found by walking it: each folder is opened and checked
 * to lie inside the root before it is read, symlinks are neither followed nor listed.
 * Patterns only filter this walk, so they cannot name anything outside.
 */
async function walk(folder: GuardedPath): Promise<{ files: FoundFile[]; truncated: boolean }> {
  const files: FoundFile[] = [];
  let seen = 0;
  const visit = async (real: string, rel: string): Promise<boolean> => {
    const subfolders: string[] = [];
    const ok = await inFolder(real, folder.realRoot, async (at) => {
      for (const d of await readdir(at('.'), { withFileTypes: true })) {
        if (++seen > MAX_WALKED_ENTRIES) return false;
        const childRel = rel === '' ? d.name : `${rel}/${d.name}`;
        if (d.isDirectory()) {
          if (!SKIPPED_FOLDERS.has(d.name)) subfolders.push(d.name);
        } else if (d.isFile()) {
          const st = await lstat(at(d.name)).catch(() => null);
          if (st?.isFile()) files.push({ rel: childRel, mtimeMs: st.mtimeMs });
        }
      }
      return true;
    }).catch(() => true); // gone or swapped meanwhile: nothing to list there
    if (!ok) return false;
    for (const name of subfolders.sort()) {
      if (!(await visit(`${real}/${name}`, rel === '' ? name : `${rel}/${name}`))) return false;
    }
    return true;
  };
  const complete = await visit(folder.real, '');
  return { files, truncated: !complete };
}

/** The lines of one file, opened without following a symlink, inside its checked folder. */
async function readLines(folder: GuardedPath, rel: string, onLine: (text: string) => boolean): Promise<void> {
  const slash = rel.lastIndexOf('/');
  const dir = slash === -1 ? folder.real : `${folder.real}/${rel.slice(0, slash)}`;
  await inFolder(dir, folder.realRoot, async (at: EntryAt) => {
    const handle = await open(at(rel.slice(slash + 1)), READ_NO_FOLLOW);
    try {
      const info = await handle.stat();
      if (!info.isFile() || info.size > MAX_GREP_FILE_BYTES) return;
      const lines = createInterface({
        input: createReadStream('', { fd: handle.fd, encoding: 'utf8', autoClose: false }),
        crlfDelay: Infinity,
      });
      for await (const text of lines) {
        if (!onLine(text)) {
          lines.close();
          break;
        }
      }
    } finally {
      await handle.close();
    }
  });
}

/** Glob and grep by walking the guarded folder (picomatch filters); never follows symlinks. */
export class NodeWorkspaceSearch extends WorkspaceSearch {
  async glob(
    folder: GuardedPath,
    pattern: string,
    maxResults: number,
  ): Promise<{ paths: string[]; truncated: boolean }> {
    const matches = picomatch(pattern, { dot: true });
    const { files, truncated } = await walk(folder);
    const found = files.filter((f) => matches(f.rel));
    found.sort((a, b) => b.mtimeMs - a.mtimeMs || a.rel.localeCompare(b.rel));
    return { paths: found.slice(0, maxResults).map((f) => f.rel), truncated: truncated || found.length > maxResults };
  }

  async grep(
    folder: GuardedPath,
    pattern: RegExp,
    options: GrepOptions,
  ): Promise<{ matches: GrepMatch[]; truncated: boolean }> {
    const matchesGlob = options.glob
      ? picomatch(options.glob, { dot: true, matchBase: !options.glob.includes('/') })
      : null;
    const { files, truncated } = await walk(folder);
    const matches: GrepMatch[] = [];
    for (const file of files.map((f) => f.rel).sort()) {
      if (matchesGlob && !matchesGlob(file)) continue;
      let line = 0;
      const found: GrepMatch[] = [];
      let binary = false;
      await readLines(folder, file, (text) => {
        line++;
        if (text.includes('\u0000')) {
          binary = true;
          return false;
        }
        if (pattern.test(text)) {
          found.push({ file, line, text: text.length > 500 ? `${text.slice(0, 500)}…` : text });
          if (matches.length + found.length >= options.maxResults) return false;
        }
        return true;
      }).catch(() => undefined); // gone, swapped or unreadable meanwhile: skipped
      if (binary) continue;
      matches.push(...found);
      if (matches.length >= options.maxResults) return { matches, truncated: true };
    }
    return { matches, truncated };
  }
}
