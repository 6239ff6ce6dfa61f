import { FileStore } from '../../ports/file-store.port.js';
import { SearchTimeLimitError, WorkspaceSearch } from '../../ports/workspace-search.port.js';
import type { Space } from '../../kernel/space.js';
import { globPatternProblem } from '../../kernel/glob.js';
import { searchPatternProblem } from '../../artifacts/path-rules.js';
import { guard } from './file-tools.js';
import { type AgentTool, requireString, ToolInputError } from '../../kernel/tool.js';

const MAX_GLOB_RESULTS = 500;
const MAX_GREP_RESULTS = 500;

async function searchRoot(files: FileStore, space: Space, path: unknown) {
  const folder = await guard(files, space, typeof path === 'string' && path !== '' ? path : space.path, true);
  const info = await files.stat(folder);
  if (info?.kind !== 'folder') throw new ToolInputError(`Not a folder: ${folder.path}`);
  return folder;
}

/** A pattern that would name places outside the workspace is refused before any search. */
function checkPattern(field: string, pattern: string): void {
  const problem = searchPatternProblem(pattern);
  if (problem) throw new ToolInputError(`Access denied: ${field} ${problem}`);
  const unusable = globPatternProblem(pattern);
  if (unusable) throw new ToolInputError(`Invalid glob ${field} ${JSON.stringify(pattern)}: ${unusable}`);
}

/**
 * A search that ran past its time limit, told to the model as a tool error naming the pattern
 * (anything else goes on as it was).
 */
async function withinLimit<T>(what: string, search: () => Promise<T>): Promise<T> {
  try {
    return await search();
  } catch (err) {
    if (!(err instanceof SearchTimeLimitError)) throw err;
    throw new ToolInputError(
      `${what} was stopped after ${Math.round(err.limitMs / 1000)} s. A pattern with nested repetition ` +
        '(such as (a+)+) can take for ever on some lines; simplify it, or search a smaller folder with path.',
    );
  }
}

const join = (base: string, rel: string): string => (base === '' ? rel : `${base}/${rel}`);

export function globTool(files: FileStore, search: WorkspaceSearch): AgentTool {
  return {
    name: 'Glob',
    description:
      'Find files by glob pattern (e.g. "**/*.ts") in the workspace or under path. Returns paths, newest first.',
    inputSchema: {
      type: 'object',
      properties: { pattern: { type: 'string' }, path: { type: 'string' } },
      required: ['pattern'],
    },
    async run(input, { space, signal }) {
      const pattern = requireString(input, 'pattern');
      checkPattern('pattern', pattern);
      const folder = await searchRoot(files, space, input.path);
      const { paths, truncated } = await withinLimit(`Glob ${JSON.stringify(pattern)}`, () =>
        search.glob(folder, pattern, MAX_GLOB_RESULTS, { signal }),
      );
      if (paths.length === 0) return { output: 'No files found', isError: false };
      const listed = paths.map((p) => `${space.path}/${join(folder.relativePath, p)}`).join('\n');
      return { output: truncated ? `${listed}\n(results truncated at ${MAX_GLOB_RESULTS})` : listed, isError: false };
    },
  };
}

export function grepTool(files: FileStore, search: WorkspaceSearch): AgentTool {
  return {
    name: 'Grep',
    description:
      'Search file contents with a regular expression. output_mode: "files_with_matches" (default), "content" (matching lines with line numbers) or "count".',
    inputSchema: {
      type: 'object',
      properties: {
        pattern: { type: 'string' },
        path: { type: 'string' },
        glob: { type: 'string' },
        output_mode: { type: 'string', enum: ['content', 'files_with_matches', 'count'] },
        '-i': { type: 'boolean' },
      },
      required: ['pattern'],
    },
    async run(input, { space, signal }) {
      const source = requireString(input, 'pattern');
      let regex: RegExp;
      try {
        regex = new RegExp(source, input['-i'] === true ? 'i' : '');
      } catch (err) {
        throw new ToolInputError(`Invalid regular expression: ${(err as Error).message}`);
      }
      const mode = input.output_mode ?? 'files_with_matches';
      if (!['content', 'files_with_matches', 'count'].includes(mode as string)) {
        throw new ToolInputError('output_mode must be content, files_with_matches or count');
      }
      const glob = typeof input.glob === 'string' && input.glob !== '' ? input.glob : undefined;
      if (glob !== undefined) checkPattern('glob', glob);
      const folder = await searchRoot(files, space, input.path);
      const described =
        glob === undefined ? JSON.stringify(source) : `${JSON.stringify(source)} (glob ${JSON.stringify(glob)})`;
      const { matches, truncated } = await withinLimit(`Grep ${described}`, () =>
        search.grep(folder, regex, { glob, maxResults: MAX_GREP_RESULTS, signal }),
      );
      if (matches.length === 0) return { output: 'No matches found', isError: false };
      const abs = (file: string): string => `${space.path}/${join(folder.relativePath, file)}`;
      let output: string;
      if (mode === 'content') {
        output = matches.map((m) => `${abs(m.file)}:${m.line}:${m.text}`).join('\n');
      } else {
        const counts = new Map<string, number>();
        for (const m of matches) counts.set(m.file, (counts.get(m.file) ?? 0) + 1);
        output = [...counts].map(([file, n]) => (mode === 'count' ? `${abs(file)}:${n}` : abs(file))).join('\n');
      }
      return { output: truncated ? `${output}\n(results truncated)` : output, isError: false };
    },
  };
}
