import { extname, isAbsolute, normalize, resolve } from 'node:path';
import { DomainError } from '../errors/domain-error.js';
import type { FileStore } from '../ports/file-store.port.js';

export const RUN_DEFAULT_TIMEOUT_MS = 60_000;
export const RUN_MIN_TIMEOUT_MS = 1_000;
export const RUN_MAX_TIMEOUT_MS = 120_000;
const SCRIPT_MAX_BYTES = 5 * 1024 * 1024;

/** `browser_run`'s timeout: 60 s by default, within [1 s, 120 s]. */
export function runTimeout(requested: unknown): number {
  if (typeof requested !== 'number' || !Number.isFinite(requested) || requested <= 0) return RUN_DEFAULT_TIMEOUT_MS;
  return Math.min(RUN_MAX_TIMEOUT_MS, Math.max(RUN_MIN_TIMEOUT_MS, Math.floor(requested)));
}

/**
 * The script `browser_run` applies: `file` relative to the space's working folder (or absolute
 * inside it; its `.claude/skills/<id>/` lies there too), checked in the original's order: a
 * `.js` name, inside the folder after every symlink is resolved (the path guard), present,
 * readable, not empty. Answers the script's text (trimmed, trailing semicolons dropped) or the
 * tool's error text.
 */
export async function loadRunScript(
  file: string,
  workDir: string,
  files: FileStore,
): Promise<{ source: string } | { error: string }> {
  const resolved = isAbsolute(file) ? normalize(file) : resolve(workDir, file);
  const ext = extname(resolved);
  if (ext !== '.js') return { error: `Invalid file type: expected .js file, got "${ext}".` };
  let guarded;
  try {
    guarded = await files.resolve({ roots: [workDir], path: resolved });
  } catch (err) {
    if (err instanceof DomainError) {
      return {
        error: `Path not allowed: "${resolved}". Scripts must be within a .claude/skills/ directory or the space working directory.`,
      };
    }
    throw err;
  }
  const info = await files.stat(guarded).catch(() => null);
  if (!info || info.kind !== 'file') return { error: `File not found: "${resolved}".` };
  let content: Buffer | 'too-large';
  try {
    content = await files.readFile(guarded, SCRIPT_MAX_BYTES);
  } catch (err) {
    return { error: `Failed to read file: ${(err as Error).message}` };
  }
  if (content === 'too-large') return { error: `Failed to read file: "${resolved}" is larger than 5 MB.` };
  const source = content
    .toString('utf8')
    .trim()
    .replace(/;+\s*$/, '')
    .trim();
  if (source === '') return { error: `File is empty: "${resolved}".` };
  return { source };
}
