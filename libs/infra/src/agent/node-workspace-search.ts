import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import picomatch from 'picomatch';
import { glob } from 'tinyglobby';
import { type GrepMatch, type GrepOptions, WorkspaceSearch } from '#core/ports/workspace-search.port.js';

const IGNORE = ['**/.git/**', '**/node_modules/**', '.svc/**', '**/.svc/**'];
const MAX_GREP_FILE_BYTES = 5 * 1024 * 1024;

/** Glob with tinyglobby, grep by streaming lines; never follows symlinks. */
export class NodeWorkspaceSearch extends WorkspaceSearch {
  async glob(
    realFolder: string,
    pattern: string,
    maxResults: number,
  ): Promise<{ paths: string[]; truncated: boolean }> {
    const paths = await glob(pattern, {
      cwd: realFolder,
      ignore: IGNORE,
      followSymbolicLinks: false,
      dot: true,
      onlyFiles: true,
    });
    const withTimes = await Promise.all(
      paths.map(async (p) => ({
        p,
        t: await stat(`${realFolder}/${p}`).then(
          (s) => s.mtimeMs,
          () => 0,
        ),
      })),
    );
    withTimes.sort((a, b) => b.t - a.t || a.p.localeCompare(b.p));
    return { paths: withTimes.slice(0, maxResults).map((x) => x.p), truncated: withTimes.length > maxResults };
  }

  async grep(
    realFolder: string,
    pattern: RegExp,
    options: GrepOptions,
  ): Promise<{ matches: GrepMatch[]; truncated: boolean }> {
    const files = await glob(options.glob ? [options.glob, `**/${options.glob}`] : '**/*', {
      cwd: realFolder,
      ignore: IGNORE,
      followSymbolicLinks: false,
      dot: true,
      onlyFiles: true,
    });
    const matchesGlob = options.glob
      ? picomatch(options.glob, { dot: true, matchBase: !options.glob.includes('/') })
      : null;
    const matches: GrepMatch[] = [];
    for (const file of files.sort()) {
      if (matchesGlob && !matchesGlob(file)) continue;
      const info = await stat(`${realFolder}/${file}`).catch(() => null);
      if (!info || info.size > MAX_GREP_FILE_BYTES) continue;
      let line = 0;
      let binary = false;
      const lines = createInterface({
        input: createReadStream(`${realFolder}/${file}`, { encoding: 'utf8' }),
        crlfDelay: Infinity,
      });
      for await (const text of lines) {
        line++;
        if (text.includes('\u0000')) {
          binary = true;
          break;
        }
        if (pattern.test(text)) {
          matches.push({ file, line, text: text.length > 500 ? `${text.slice(0, 500)}…` : text });
          if (matches.length >= options.maxResults) {
            lines.close();
            return { matches, truncated: true };
          }
        }
      }
      if (binary) continue;
    }
    return { matches, truncated: false };
  }
}
