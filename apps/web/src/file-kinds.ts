// Which preview a file gets, by its name and type: small, so the Files screen decides without
// loading the previews themselves (file-preview.tsx, loaded on first use).

/** A file name's extension, lower case ('' when it has none; a leading dot is not one). */
const extension = (name: string): string => {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
};

/** The field delimiter a file's name or type asks for, or null when it is not a table. */
export function tableDelimiter(name: string, mimeType: string): string | null {
  const ext = extension(name);
  if (ext === 'tsv' || ext === 'tab' || mimeType === 'text/tab-separated-values') return '\t';
  if (ext === 'csv' || mimeType === 'text/csv') return ',';
  return null;
}

/** highlight.js language names (each registered in markdown.ts) by file extension. */
const LANGUAGES: Record<string, string> = {
  ts: 'typescript',
  tsx: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  js: 'javascript',
  jsx: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  json: 'json',
  py: 'python',
  sh: 'bash',
  bash: 'bash',
  css: 'css',
  html: 'xml',
  htm: 'xml',
  xml: 'xml',
  yaml: 'yaml',
  yml: 'yaml',
  go: 'go',
  rs: 'rust',
  java: 'java',
  sql: 'sql',
  diff: 'diff',
  patch: 'diff',
};

/** The highlighting language for a file name, or null for plain text. */
export function codeLanguage(name: string): string | null {
  const ext = extension(name);
  return Object.hasOwn(LANGUAGES, ext) ? LANGUAGES[ext]! : null;
}
