import { basename, extname } from 'node:path';
import mime from 'mime-types';

/**
 * Text or binary, MIME type and viewer kind of a file, from its name and the first bytes of
 * its content. Pure: the caller reads the bytes.
 */

/** How many leading bytes the NUL-byte sniff looks at. */
export const SNIFF_BYTES = 8 * 1024;
/** Largest text file `content` returns (as UTF-8). */
export const MAX_TEXT_BYTES = 10 * 1024 * 1024;
/** Largest binary file `content` returns (as base64). */
export const MAX_BINARY_BYTES = 50 * 1024 * 1024;

export type ContentType =
  'markdown' | 'html' | 'json' | 'code' | 'csv' | 'text' | 'image' | 'pdf' | 'audio' | 'video' | 'binary';

export interface FileTypeInfo {
  isText: boolean;
  canViewInCanvas: boolean;
  contentType: ContentType;
  mimeType: string;
}

/** Source-code extensions, with the MIME type to report where the registry has none or a wrong one (`.ts` is not MPEG-2 video here). */
const CODE: Readonly<Record<string, string>> = {
  ts: 'text/typescript',
  tsx: 'text/typescript',
  mts: 'text/typescript',
  cts: 'text/typescript',
  js: 'text/javascript',
  jsx: 'text/javascript',
  mjs: 'text/javascript',
  cjs: 'text/javascript',
  py: 'text/x-python',
  rb: 'text/x-ruby',
  go: 'text/x-go',
  rs: 'text/x-rust',
  java: 'text/x-java-source',
  kt: 'text/x-kotlin',
  kts: 'text/x-kotlin',
  scala: 'text/x-scala',
  swift: 'text/x-swift',
  c: 'text/x-c',
  h: 'text/x-c',
  cc: 'text/x-c',
  cpp: 'text/x-c',
  cxx: 'text/x-c',
  hpp: 'text/x-c',
  cs: 'text/x-csharp',
  php: 'text/x-php',
  pl: 'text/x-perl',
  lua: 'text/x-lua',
  r: 'text/x-r',
  dart: 'text/x-dart',
  sh: 'text/x-shellscript',
  bash: 'text/x-shellscript',
  zsh: 'text/x-shellscript',
  fish: 'text/x-shellscript',
  ps1: 'text/x-powershell',
  bat: 'text/x-bat',
  sql: 'text/x-sql',
  css: 'text/css',
  scss: 'text/x-scss',
  sass: 'text/x-sass',
  less: 'text/x-less',
  vue: 'text/x-vue',
  svelte: 'text/x-svelte',
  yaml: 'text/yaml',
  yml: 'text/yaml',
  toml: 'text/x-toml',
  ini: 'text/plain',
  cfg: 'text/plain',
  conf: 'text/plain',
  xml: 'application/xml',
  graphql: 'text/x-graphql',
  gql: 'text/x-graphql',
  proto: 'text/plain',
  gradle: 'text/plain',
  tf: 'text/plain',
  dockerfile: 'text/plain',
  makefile: 'text/plain',
};

/** File names without a telling extension that are text. */
const TEXT_NAMES = new Set([
  'makefile',
  'dockerfile',
  'license',
  'readme',
  'changelog',
  '.gitignore',
  '.gitattributes',
  '.editorconfig',
  '.env',
  '.npmrc',
  '.dockerignore',
  '.prettierrc',
  '.eslintrc',
]);

const TEXTUAL_APPLICATION = new Set([
  'application/json',
  'application/ld+json',
  'application/xml',
  'application/javascript',
  'application/x-javascript',
  'application/ecmascript',
  'application/typescript',
  'application/x-sh',
  'application/x-csh',
  'application/x-httpd-php',
  'application/sql',
  'application/graphql',
  'application/toml',
  'application/yaml',
  'application/x-yaml',
  'application/x-tex',
  'application/x-latex',
  'application/node',
  'application/xhtml+xml',
  'application/rss+xml',
  'application/atom+xml',
  'application/manifest+json',
  'application/geo+json',
]);

/** Whether a MIME type names text (before looking at the bytes). */
export function isTextualMime(mimeType: string): boolean {
  if (mimeType.startsWith('text/')) return true;
  if (mimeType === 'image/svg+xml') return true;
  if (TEXTUAL_APPLICATION.has(mimeType)) return true;
  return mimeType.startsWith('application/') && (mimeType.endsWith('+json') || mimeType.endsWith('+xml'));
}

/** Whether the bytes hold a NUL byte (the mark of binary content). */
export function containsNulByte(bytes: Uint8Array): boolean {
  return bytes.indexOf(0) !== -1;
}

function extensionOf(name: string): string {
  return extname(name).slice(1).toLowerCase();
}

/** The MIME type a name suggests, or null when nothing is known about it. */
export function mimeForName(name: string): string | null {
  const ext = extensionOf(name);
  if (ext && CODE[ext]) return CODE[ext];
  const looked = mime.lookup(name);
  if (looked) return looked;
  const base = basename(name).toLowerCase();
  if (TEXT_NAMES.has(base) || CODE[base]) return 'text/plain';
  return null;
}

function contentTypeFor(name: string, mimeType: string, isText: boolean): ContentType {
  if (mimeType.startsWith('image/')) return 'image';
  if (mimeType === 'application/pdf') return 'pdf';
  if (!isText) {
    if (mimeType.startsWith('video/')) return 'video';
    if (mimeType.startsWith('audio/')) return 'audio';
    return 'binary';
  }
  const ext = extensionOf(name);
  if (mimeType === 'text/markdown' || ext === 'md' || ext === 'markdown' || ext === 'mdx') return 'markdown';
  if (mimeType === 'text/html' || mimeType === 'application/xhtml+xml') return 'html';
  if (mimeType === 'application/json' || mimeType.endsWith('+json')) return 'json';
  if (mimeType === 'text/csv') return 'csv';
  if (CODE[ext] || CODE[basename(name).toLowerCase()] || mimeType === 'text/javascript' || mimeType === 'text/css') {
    return 'code';
  }
  return 'text';
}

/**
 * Classifies a file. Text needs both a textual (or unknown) MIME type and no NUL byte in
 * `head` (its first SNIFF_BYTES bytes); an unknown type without NULs is plain text.
 */
export function detectFileType(name: string, head: Uint8Array): FileTypeInfo {
  const known = mimeForName(name);
  const binaryBytes = containsNulByte(head.subarray(0, SNIFF_BYTES));
  const isText = !binaryBytes && (known === null || isTextualMime(known));
  const mimeType = known ?? (isText ? 'text/plain' : 'application/octet-stream');
  const contentType = contentTypeFor(name, mimeType, isText);
  const canViewInCanvas = contentType !== 'binary' && contentType !== 'audio' && contentType !== 'video';
  return { isText, canViewInCanvas, contentType, mimeType };
}
