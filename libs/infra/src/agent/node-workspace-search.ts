import { createReadStream } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { Worker } from 'node:worker_threads';
import { compileGlob } from '#core/kernel/glob.js';
import type { GuardedPath } from '#core/ports/file-store.port.js';
import {
  type GrepMatch,
  type GrepOptions,
  type SearchControl,
  SearchTimeLimitError,
  WorkspaceSearch,
} from '#core/ports/workspace-search.port.js';
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

/** What a search worker is asked (plain data: it crosses threads). */
export type SearchJob =
  | { kind: 'glob'; folder: GuardedPath; pattern: string; maxResults: number }
  | { kind: 'grep'; folder: GuardedPath; source: string; flags: string; options: GrepOptions };

/** A search worker's answer. */
export type SearchAnswer = { ok: true; result: unknown } | { ok: false; message: string };

/** Glob in this thread: walk, then filter with a linear-time glob matcher. */
async function globHere(folder: GuardedPath, pattern: string, maxResults: number) {
  const matches = compileGlob(pattern);
  const { files, truncated } = await walk(folder);
  const found = files.filter((f) => matches(f.rel));
  found.sort((a, b) => b.mtimeMs - a.mtimeMs || a.rel.localeCompare(b.rel));
  return { paths: found.slice(0, maxResults).map((f) => f.rel), truncated: truncated || found.length > maxResults };
}

/** Grep in this thread: walk, read line by line, test each line. */
async function grepHere(folder: GuardedPath, pattern: RegExp, options: GrepOptions) {
  const matchesGlob = options.glob ? compileGlob(options.glob, { matchBase: true }) : null;
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

/** Runs one job in the current thread (what a search worker does). */
export async function runSearchJob(job: SearchJob): Promise<unknown> {
  if (job.kind === 'glob') return globHere(job.folder, job.pattern, job.maxResults);
  return grepHere(job.folder, new RegExp(job.source, job.flags), job.options);
}

export interface WorkspaceSearchOptions {
  /** A search still running after this long is stopped (its worker terminated). */
  timeLimitMs?: number;
  /** Searches running at once; more wait their turn. */
  concurrency?: number;
}

/** A search gets this long before it is stopped. */
export const DEFAULT_SEARCH_TIME_LIMIT_MS = 10_000;

/**
 * Glob and grep by walking the guarded folder; never follows symlinks. Each search runs in a
 * worker thread of its own with a hard time limit, terminated when it runs over: a regular
 * expression that backtracks for minutes (`^(a+)+$` on a long line of a's) burns that
 * worker's time, never the event loop's, and stops at the limit. Globs are matched in linear
 * time anyway (see `compileGlob`). A worker also has a memory ceiling.
 */
export class NodeWorkspaceSearch extends WorkspaceSearch {
  private readonly timeLimitMs: number;
  private readonly concurrency: number;
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(options: WorkspaceSearchOptions = {}) {
    super();
    this.timeLimitMs = options.timeLimitMs ?? DEFAULT_SEARCH_TIME_LIMIT_MS;
    this.concurrency = options.concurrency ?? 2;
  }

  async glob(
    folder: GuardedPath,
    pattern: string,
    maxResults: number,
    control: SearchControl = {},
  ): Promise<{ paths: string[]; truncated: boolean }> {
    return (await this.inWorker({ kind: 'glob', folder: plain(folder), pattern, maxResults }, control.signal)) as {
      paths: string[];
      truncated: boolean;
    };
  }

  async grep(
    folder: GuardedPath,
    pattern: RegExp,
    { signal, ...options }: GrepOptions & SearchControl,
  ): Promise<{ matches: GrepMatch[]; truncated: boolean }> {
    const job: SearchJob = {
      kind: 'grep',
      folder: plain(folder),
      source: pattern.source,
      flags: pattern.flags,
      options,
    };
    return (await this.inWorker(job, signal)) as { matches: GrepMatch[]; truncated: boolean };
  }

  private async inWorker(job: SearchJob, signal?: AbortSignal): Promise<unknown> {
    await this.acquire();
    try {
      signal?.throwIfAborted();
      return await this.runWorker(job, signal);
    } finally {
      this.release();
    }
  }

  private runWorker(job: SearchJob, signal?: AbortSignal): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const worker = new Worker(new URL('./workspace-search.worker.js', import.meta.url), {
        workerData: job,
        resourceLimits: { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32 },
      });
      let settled = false;
      const settle = (done: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', stopped);
        done();
        void worker.terminate();
      };
      // A stopped turn's search ends now, not at the time limit: its worker is terminated.
      const stopped = (): void => settle(() => reject(new Error('the search was stopped with its turn')));
      signal?.addEventListener('abort', stopped, { once: true });
      const timer = setTimeout(
        () => settle(() => reject(new SearchTimeLimitError(this.timeLimitMs))),
        this.timeLimitMs,
      );
      worker.once('message', (answer: SearchAnswer) =>
        settle(() => (answer.ok ? resolve(answer.result) : reject(new Error(answer.message)))),
      );
      worker.once('error', (err) => settle(() => reject(err)));
      worker.once('exit', (code) => settle(() => reject(new Error(`the search stopped (exit code ${code})`))));
    });
  }

  private async acquire(): Promise<void> {
    if (this.running < this.concurrency) {
      this.running++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}

/** The guarded path as plain data (it crosses to the worker). */
function plain(folder: GuardedPath): GuardedPath {
  return {
    root: folder.root,
    realRoot: folder.realRoot,
    path: folder.path,
    relativePath: folder.relativePath,
    entry: folder.entry,
    real: folder.real,
  };
}
