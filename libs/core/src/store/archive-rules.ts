/** Rules for what a package (.dhpkg / .zip / folder) may hold (docs/api/store-and-packages.md, "Packages"). */

/** Archives larger than this are refused without being read. */
export const PACKAGE_MAX_BYTES = 50 * 1024 * 1024;
/** The most an archive may unpack to, counted while unpacking (headers are not trusted). */
export const PACKAGE_MAX_UNPACKED_BYTES = 200 * 1024 * 1024;
/** The most files a package may hold. */
export const PACKAGE_MAX_ENTRIES = 2000;
/** Export stops when the files to pack exceed this. */
export const EXPORT_MAX_BYTES = 50 * 1024 * 1024;

/**
 * Why an archive entry name is refused, or null: `..` segments, a leading `/` or `\`, a
 * drive letter, a backslash, a NUL or an empty name.
 */
export function entryNameProblem(name: string): string | null {
  if (name === '' || name.includes('\0')) return 'an empty or NUL-holding name';
  if (name.startsWith('/') || name.startsWith('\\')) return 'an absolute path';
  if (/^[a-zA-Z]:/.test(name)) return 'a drive letter';
  if (name.includes('\\')) return 'a backslash';
  if (name.split('/').some((p) => p === '..')) return 'a .. segment';
  return null;
}

/**
 * Where `spec.yaml` sits: at the root, or inside one top-level folder that holds everything.
 * Answers the prefix to strip ('' or 'folder/'), or null when there is no spec.yaml there.
 */
export function packageRoot(names: readonly string[]): string | null {
  if (names.includes('spec.yaml')) return '';
  const tops = new Set(names.map((n) => n.split('/')[0]));
  if (tops.size !== 1) return null;
  const top = [...tops][0]!;
  return names.includes(`${top}/spec.yaml`) ? `${top}/` : null;
}

/** A bundled skill file path inside a package: `skills/<id>/<file...>`. */
export function bundledSkillPath(name: string): { id: string; file: string } | null {
  const m = /^skills\/([a-z0-9][a-z0-9._-]*)\/(.+)$/i.exec(name);
  if (!m || m[2]!.endsWith('/')) return null;
  return { id: m[1]!, file: m[2]! };
}

/**
 * Text that looks like a credential: private keys, provider API keys, bearer tokens and the
 * like. A package holding one is refused (never silently stripped): the author fixes the file.
 */
const SECRET_PATTERNS: Array<[RegExp, string]> = [
  [/-----BEGIN (?:RSA |EC |OPENSSH |DSA |PGP )?PRIVATE KEY-----/, 'a private key'],
  [/\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}/, 'an API key (sk-...)'],
  [/\bAKIA[0-9A-Z]{16}\b/, 'an AWS access key'],
  [/\bgh[pousr]_[A-Za-z0-9]{30,}\b/, 'a GitHub token'],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}/, 'a Slack token'],
  [/\bAIza[0-9A-Za-z_-]{35}\b/, 'a Google API key'],
];

export function secretProblem(text: string): string | null {
  for (const [pattern, what] of SECRET_PATTERNS) if (pattern.test(text)) return what;
  return null;
}

/** The most bytes of skill files one install may bring (as for a Store item). */
export const INSTALL_FILES_MAX_BYTES = 10 * 1024 * 1024;

/**
 * The `files` of an install body (`POST /api/apps/install`): package paths to contents, a
 * string (UTF-8 text) or `{base64}`. Names follow the package entry rules; at most
 * PACKAGE_MAX_ENTRIES files and INSTALL_FILES_MAX_BYTES in all. Throws an Error naming the field.
 */
export function givenFiles(raw: unknown): Array<{ path: string; data: Uint8Array }> {
  if (raw === undefined || raw === null) return [];
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new Error('files must be an object of file contents by path');
  const entries = Object.entries(raw as Record<string, unknown>);
  if (entries.length > PACKAGE_MAX_ENTRIES) throw new Error(`files may hold at most ${PACKAGE_MAX_ENTRIES} files`);
  let total = 0;
  return entries.map(([path, value]) => {
    const problem = entryNameProblem(path);
    if (problem) throw new Error(`files: ${JSON.stringify(path)} has ${problem}`);
    let data: Uint8Array;
    if (typeof value === 'string') data = new TextEncoder().encode(value);
    else if (
      typeof value === 'object' &&
      value !== null &&
      typeof (value as { base64?: unknown }).base64 === 'string'
    ) {
      data = Buffer.from((value as { base64: string }).base64, 'base64');
    } else throw new Error(`files.${path} must be the file's text or {base64}`);
    total += data.byteLength;
    if (total > INSTALL_FILES_MAX_BYTES) throw new Error('files exceed 10 MB in all');
    return { path, data };
  });
}
