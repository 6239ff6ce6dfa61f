import picomatch from 'picomatch';

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
 */
export function fileSubscriptionMatches(config: FileTriggerConfig, change: ChangedFile): boolean {
  if (isServerOwned(change.relativePath)) return false;
  if (typeof config.path === 'string' && config.path !== '' && !change.path.includes(config.path)) return false;
  if (typeof config.pattern === 'string' && config.pattern !== '') {
    const subject = config.pattern.includes('/')
      ? change.relativePath
      : change.relativePath.slice(change.relativePath.lastIndexOf('/') + 1);
    return picomatch.isMatch(subject, config.pattern, { dot: true });
  }
  return true;
}
