export interface GrepOptions {
  /** Only files whose relative path matches this glob. */
  glob?: string;
  maxResults: number;
  caseInsensitive?: boolean;
}

export interface GrepMatch {
  /** Relative to the searched folder's root. */
  file: string;
  line: number;
  text: string;
}

/**
 * Glob and grep inside a folder the path guard already accepted (`realFolder`). Symlinks are
 * not followed, and `.git`, `node_modules` and `.svc` are skipped.
 */
export abstract class WorkspaceSearch {
  /** Relative paths (from realFolder) of files matching `pattern`, newest first. */
  abstract glob(
    realFolder: string,
    pattern: string,
    maxResults: number,
  ): Promise<{ paths: string[]; truncated: boolean }>;
  abstract grep(
    realFolder: string,
    pattern: RegExp,
    options: GrepOptions,
  ): Promise<{ matches: GrepMatch[]; truncated: boolean }>;
}
