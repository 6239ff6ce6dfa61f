import { DomainError } from '../../errors/domain-error.js';
import { FileStore, type GuardedPath } from '../../ports/file-store.port.js';
import type { Space } from '../../kernel/space.js';
import { type AgentTool, optionalNumber, requireString, ToolInputError } from '../../kernel/tool.js';

const READ_MAX_BYTES = 10 * 1024 * 1024;
const DEFAULT_LINE_LIMIT = 2000;
const MAX_LINE_CHARS = 2000;

/** Every path a tool touches goes through the same guard as the file API. */
export async function guard(files: FileStore, space: Space, path: string, allowRoot = false): Promise<GuardedPath> {
  try {
    return await files.resolve({ roots: [space.path], base: space.path, path, allowRoot });
  } catch (err) {
    if (err instanceof DomainError && err.kind === 'forbidden') {
      throw new ToolInputError(`Access denied: ${path} is outside the workspace folder ${space.path}`);
    }
    throw err;
  }
}

/** A file's text, or null with its size when it holds a NUL byte anywhere (binary: never shown as text). */
async function readContent(files: FileStore, target: GuardedPath): Promise<{ text: string } | { binaryBytes: number }> {
  const info = await files.stat(target);
  if (!info) throw new ToolInputError(`File not found: ${target.path}`);
  if (info.kind !== 'file') throw new ToolInputError(`Not a file: ${target.path}`);
  const data = await files.readFile(target, READ_MAX_BYTES);
  if (data === 'too-large') throw new ToolInputError(`File too large to read (over 10 MB): ${target.path}`);
  return data.includes(0) ? { binaryBytes: data.length } : { text: data.toString('utf8') };
}

const binaryNote = (path: string, bytes: number): string => `Binary file, not shown: ${path} (${bytes} bytes)`;

async function readText(files: FileStore, target: GuardedPath): Promise<string> {
  const content = await readContent(files, target);
  if ('binaryBytes' in content) throw new ToolInputError(binaryNote(target.path, content.binaryBytes));
  return content.text;
}

export function readTool(files: FileStore): AgentTool {
  return {
    name: 'Read',
    description:
      'Read a text file from the workspace. file_path is absolute (inside the workspace) or relative to the workspace folder. ' +
      'Output lines are numbered (cat -n style); use offset (1-based line) and limit to read part of a long file.',
    inputSchema: {
      type: 'object',
      properties: {
        file_path: { type: 'string', description: 'Path of the file to read' },
        offset: { type: 'number', description: 'Line number to start from (1-based)' },
        limit: { type: 'number', description: 'Number of lines to read' },
      },
      required: ['file_path'],
    },
    async run(input, { space }) {
      const target = await guard(files, space, requireString(input, 'file_path'));
      const content = await readContent(files, target);
      if ('binaryBytes' in content) return { output: binaryNote(target.path, content.binaryBytes), isError: false };
      const text = content.text;
      const lines = text.split('\n');
      const start = Math.max(1, optionalNumber(input, 'offset') ?? 1);
      const limit = optionalNumber(input, 'limit') ?? DEFAULT_LINE_LIMIT;
      const slice = lines.slice(start - 1, start - 1 + limit);
      if (text === '') return { output: '(empty file)', isError: false };
      const body = slice
        .map(
          (line, i) =>
            `${String(start + i).padStart(6)}\t${line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line}`,
        )
        .join('\n');
      const more =
        start - 1 + slice.length < lines.length ? `\n… (${lines.length - (start - 1 + slice.length)} more lines)` : '';
      return { output: body + more, isError: false };
    },
  };
}

async function ensureParents(files: FileStore, space: Space, target: GuardedPath): Promise<void> {
  const parts = target.relativePath.split('/').slice(0, -1);
  for (let i = 1; i <= parts.length; i++) {
    const folder = await guard(files, space, parts.slice(0, i).join('/'));
    const info = await files.stat(folder);
    if (info?.kind === 'file') throw new ToolInputError(`${folder.path} is a file, not a folder`);
    if (!info) await files.makeFolder(folder);
  }
}

export function writeTool(files: FileStore): AgentTool {
  return {
    name: 'Write',
    description: 'Write a file in the workspace, replacing it if it exists. Missing parent folders are created.',
    inputSchema: {
      type: 'object',
      properties: { file_path: { type: 'string' }, content: { type: 'string' } },
      required: ['file_path', 'content'],
    },
    async run(input, { space }) {
      const target = await guard(files, space, requireString(input, 'file_path'));
      const content = input.content;
      if (typeof content !== 'string') throw new ToolInputError('content is required and must be a string');
      if (target.relativePath === '') throw new ToolInputError('file_path must name a file');
      const existing = await files.stat(target);
      if (existing?.kind === 'folder') throw new ToolInputError(`${target.path} is a folder`);
      await ensureParents(files, space, target);
      await files.writeAtomic(target, content);
      return {
        output: `${existing ? 'Updated' : 'Created'} ${target.path} (${Buffer.byteLength(content)} bytes)`,
        isError: false,
      };
    },
  };
}

export function editTool(files: FileStore): AgentTool {
  return {
    name: 'Edit',
    description:
      'Replace old_string with new_string in a file. old_string must occur exactly once unless replace_all is true.',
    inputSchema: {
      type: 'object',
      properties: {
        file_path: { type: 'string' },
        old_string: { type: 'string' },
        new_string: { type: 'string' },
        replace_all: { type: 'boolean' },
      },
      required: ['file_path', 'old_string', 'new_string'],
    },
    async run(input, { space }) {
      const target = await guard(files, space, requireString(input, 'file_path'));
      const oldString = requireString(input, 'old_string');
      const newString = input.new_string;
      if (typeof newString !== 'string') throw new ToolInputError('new_string is required and must be a string');
      if (oldString === newString) throw new ToolInputError('old_string and new_string are the same');
      const text = await readText(files, target);
      const count = text.split(oldString).length - 1;
      if (count === 0) throw new ToolInputError(`old_string was not found in ${target.path}`);
      if (count > 1 && input.replace_all !== true) {
        throw new ToolInputError(
          `old_string occurs ${count} times in ${target.path}; add context to make it unique or set replace_all`,
        );
      }
      const updated =
        input.replace_all === true ? text.split(oldString).join(newString) : text.replace(oldString, () => newString);
      await files.writeAtomic(target, updated);
      return {
        output: `Edited ${target.path} (${input.replace_all === true ? count : 1} replacement${count > 1 && input.replace_all === true ? 's' : ''})`,
        isError: false,
      };
    },
  };
}
