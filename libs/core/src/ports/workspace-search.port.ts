import type { GuardedPath } from './file-store.port.js';

export interface GrepOptions {
  /** Only files whose relative path matches this glob. */
  glob?: string;
  maxResults: number;
  caseInsensitive?: boolean;
}

/** A search stops (its work ended, its promise rejected) when this fires: the turn was stopped. */
export interface SearchControl {
  signal?: AbortSignal;
}

export interface GrepMatch {
  /** Relative to the searched folder, forward slashes. */
  file: string;
  line: number;
  text: string;
}

/**
 * Glob and grep inside a folder the path guard accepted. The search walks that folder
 * only: patterns select among what the walk finds, so no pattern reaches outside it.
 * Symlinks are not followed (not even to files), every folder is checked to lie inside
 * the root once opened, and `.git`, `node_modules` and `.svc` are skipped.
 */
export abstract class WorkspaceSearch {
  /** Relative paths (from `folder`) of files matching `pattern`, newest first. */
  abstract glob(
    folder: GuardedPath,
    pattern: string,
    maxResults: number,
    control?: SearchControl,
  ): Promise<{ paths: string[]; truncated: boolean }>;
  abstract grep(
    folder: GuardedPath,
    pattern: RegExp,
    options: GrepOptions & SearchControl,
  ): Promise<{ matches: GrepMatch[]; truncated: boolean }>;
}

/** A search ran past its time limit and was stopped (say, a regular expression that backtracks for ever). */
export class SearchTimeLimitError extends Error {
  constructor(readonly limitMs: number) {
    super(`the search was stopped after ${Math.round(limitMs / 1000)} s`);
  }
}
