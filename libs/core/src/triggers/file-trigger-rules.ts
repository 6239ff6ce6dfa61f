import { compileGlob, type GlobMatcher } from '../kernel/glob.js';

/** Pure rules of file triggers (docs/api/triggers.md, "File changes"). */

export interface ChangedFile {
  /** Absolute path. */
  path: string;
  /** Inside its space's folder, forward slashes. */
  relativePath: string;
}

export interface FileTriggerConfig {
  pattern?: unknown;
  path?: unknown;
}

/** The server's own folder never triggers anything. */
export function isServerOwned(relativePath: string): boolean {
  return relativePath === '.svc' || relativePath.startsWith('.svc/') || relativePath.includes('/.svc/');
}

/**
 * Whether a change matches a file subscription: `pattern` is a glob on the path inside the space
 * (a pattern without `/` matches the file name at any depth), `path` a part of the absolute path.
 * Patterns are matched in linear time (see `compileGlob`), whatever an installed spec holds.
 */
export function fileSubscriptionMatches(config: FileTriggerConfig, change: ChangedFile): boolean {
  if (isServerOwned(change.relativePath)) return false;
  if (typeof config.path === 'string' && config.path !== '' && !change.path.includes(config.path)) return false;
  if (typeof config.pattern === 'string' && config.pattern !== '') {
    const matches = compiledPattern(config.pattern);
    return matches !== null && matches(change.relativePath);
  }
  return true;
}

/** Patterns compiled once (a pattern the matcher refuses never matches). */
const compiled = new Map<string, GlobMatcher | null>();
const MAX_COMPILED = 1_000;

function compiledPattern(pattern: string): GlobMatcher | null {
  let matcher = compiled.get(pattern);
  if (matcher === undefined) {
    try {
      matcher = compileGlob(pattern, { matchBase: true });
    } catch {
      matcher = null;
    }
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    compiled.set(pattern, matcher);
  }
  return matcher;
}
