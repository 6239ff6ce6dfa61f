import { extname } from 'node:path';

/** The formats a knowledge base accepts (docs/api/knowledge.md, "Sources"), by extension. */
export const TEXT_EXTENSIONS = ['.md', '.markdown', '.txt', '.text', '.rst', '.org', '.csv', '.tsv'] as const;
export const DOCUMENT_EXTENSIONS = ['.html', '.htm', '.pdf', '.docx', '.pptx', '.xlsx'] as const;
const ACCEPTED = new Set<string>([...TEXT_EXTENSIONS, ...DOCUMENT_EXTENSIONS]);

/** Most bytes in one source (an upload or a copied file). */
export const MAX_SOURCE_BYTES = 50 * 1024 * 1024;
/** Most files one `files` request or folder import adds. */
export const MAX_FILES_PER_IMPORT = 2000;
/** Folders a folder import never enters. */
export const PRUNED_FOLDERS = new Set([
  '.git',
  'node_modules',
  'dist',
  'build',
  '.svc',
  '.cache',
  '__pycache__',
  '.venv',
]);

/** Why a file name is not accepted, or null when it is. */
export function rejectionReason(name: string): string | null {
  const ext = extname(name).toLowerCase();
  if (ext === '') return 'Unsupported file type (no extension)';
  if (!ACCEPTED.has(ext)) {
    return `Unsupported file type ${ext} (accepted: ${[...ACCEPTED].join(' ')})`;
  }
  return null;
}
