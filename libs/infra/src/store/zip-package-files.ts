import { ErrorCodes } from '#contracts/errors.js';
import { lstat, open as openFile, readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { SPEC_YAML_MAX_CHARS } from '#core/kernel/app-spec/spec-yaml.js';
import { DomainError } from '#core/errors/domain-error.js';
import { type PackageContents, PackageFiles } from '#core/ports/package-files.port.js';
import {
  entryNameProblem,
  PACKAGE_MAX_BYTES,
  PACKAGE_MAX_ENTRIES,
  PACKAGE_MAX_UNPACKED_BYTES,
  packageRoot,
} from '#core/store/archive-rules.js';

const refused = (why: string) => DomainError.invalid(`The package is refused: ${why}`);
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

/**
 * Packages on the server's disk. Archives are read with yauzl entry by entry, every entry
 * name checked and every byte counted while inflating (sizes in headers are not trusted);
 * nothing is written to disk, so a refused package leaves nothing behind.
 */
export class ZipPackageFiles extends PackageFiles {
  async read(filePath: string): Promise<PackageContents> {
    const info = await lstat(filePath).catch(() => null);
    if (!info) throw DomainError.notFound(`filePath not found: ${filePath}`, ErrorCodes.PACKAGE_FILE_MISSING);
    if (info.isSymbolicLink()) throw refused('filePath is a symbolic link');
    if (info.isDirectory()) return this.readFolder(filePath);
    if (!info.isFile()) throw DomainError.invalid('filePath must be a .dhpkg, .zip, spec.yaml or a folder');
    if (/\.ya?ml$/i.test(filePath)) {
      if (info.size > SPEC_YAML_MAX_CHARS * 4) throw refused('the spec file is too large');
      return { specYaml: await readFile(filePath, 'utf8'), files: [] };
    }
    if (info.size > PACKAGE_MAX_BYTES)
      throw new DomainError('too_large', 'The package is refused: it is larger than 50 MB', ErrorCodes.TOO_LARGE);
    const head = Buffer.alloc(4);
    const fh = await openFile(filePath, 'r');
    try {
      await fh.read(head, 0, 4, 0);
    } finally {
      await fh.close();
    }
    if (head.readUInt32LE(0) !== 0x04034b50 && head.readUInt32LE(0) !== 0x06054b50) {
      throw DomainError.invalid(
        'filePath must be a .dhpkg, .zip, spec.yaml or a folder (the file is not a zip archive)',
      );
    }
    return fromEntries(await readZip(filePath));
  }

  async pack(contents: PackageContents): Promise<Uint8Array> {
    const zip = new yazl.ZipFile();
    const fixed = new Date(0);
    if (contents.specYaml !== '') zip.addBuffer(Buffer.from(contents.specYaml, 'utf8'), 'spec.yaml', { mtime: fixed });
    for (const f of contents.files) zip.addBuffer(Buffer.from(f.data), f.path, { mtime: fixed });
    zip.end();
    const chunks: Buffer[] = [];
    for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  /** A folder: regular files only (a symbolic link anywhere refuses the package). */
  private async readFolder(root: string): Promise<PackageContents> {
    const files: Array<{ path: string; data: Uint8Array }> = [];
    const walk = async (dir: string, prefix: string): Promise<void> => {
      for (const entry of await readdir(dir, { withFileTypes: true })) {
        const rel = prefix + entry.name;
        if (entry.isSymbolicLink()) throw refused(`${rel} is a symbolic link`);
        if (entry.isDirectory()) await walk(join(dir, entry.name), `${rel}/`);
        else if (entry.isFile()) {
          if (files.length >= PACKAGE_MAX_ENTRIES) throw refused(`more than ${PACKAGE_MAX_ENTRIES} files`);
          files.push({ path: rel, data: await readFile(join(dir, entry.name)) });
        }
      }
    };
    await walk(root, '');
    if (!files.some((f) => f.path === 'spec.yaml') && files.length === 0) {
      throw refused(`${basename(root)} holds no spec.yaml`);
    }
    return fromEntries(files);
  }
}

/** spec.yaml at the root or in one top-level folder; the rest keyed relative to it. */
function fromEntries(entries: Array<{ path: string; data: Uint8Array }>): PackageContents {
  const root = packageRoot(entries.map((e) => e.path));
  if (root === null) throw refused('no spec.yaml at the root or in a single top-level folder');
  let specYaml = '';
  const files: PackageContents['files'] = [];
  for (const e of entries) {
    if (!e.path.startsWith(root)) continue;
    const rel = e.path.slice(root.length);
    if (rel === 'spec.yaml') specYaml = Buffer.from(e.data).toString('utf8');
    else files.push({ path: rel, data: e.data });
  }
  return { specYaml, files };
}

function readZip(filePath: string): Promise<Array<{ path: string; data: Uint8Array }>> {
  return new Promise((resolve, reject) => {
    yauzl.open(
      filePath,
      { lazyEntries: true, autoClose: true, decodeStrings: true, validateEntrySizes: true, strictFileNames: false },
      (err, zip) => {
        if (err || !zip) return reject(refused(`not a readable zip archive (${err?.message ?? 'unknown'})`));
        const out: Array<{ path: string; data: Uint8Array }> = [];
        let unpacked = 0;
        let count = 0;
        const fail = (e: unknown) => {
          zip.close();
          reject(e instanceof DomainError ? e : refused(e instanceof Error ? e.message : String(e)));
        };
        zip.on('error', fail);
        zip.on('end', () => resolve(out));
        zip.on('entry', (entry: yauzl.Entry) => {
          const name = entry.fileName;
          const problem = entryNameProblem(name);
          if (problem) return fail(refused(`entry "${name}" has ${problem}`));
          const mode = (entry.externalFileAttributes >>> 16) & S_IFMT;
          if (mode === S_IFLNK) return fail(refused(`entry "${name}" is a symbolic link`));
          if (++count > PACKAGE_MAX_ENTRIES) return fail(refused(`more than ${PACKAGE_MAX_ENTRIES} entries`));
          if (name.endsWith('/')) return zip.readEntry();
          zip.openReadStream(entry, (streamErr, stream) => {
            if (streamErr || !stream) return fail(streamErr ?? new Error('unreadable entry'));
            const chunks: Buffer[] = [];
            stream.on('data', (chunk: Buffer) => {
              unpacked += chunk.length;
              if (unpacked > PACKAGE_MAX_UNPACKED_BYTES) {
                stream.destroy();
                fail(
                  new DomainError(
                    'too_large',
                    'The package is refused: it unpacks to more than 200 MB',
                    ErrorCodes.TOO_LARGE,
                  ),
                );
                return;
              }
              chunks.push(chunk);
            });
            stream.on('error', fail);
            stream.on('end', () => {
              if (unpacked > PACKAGE_MAX_UNPACKED_BYTES) return;
              out.push({ path: name, data: Buffer.concat(chunks) });
              zip.readEntry();
            });
          });
        });
        zip.readEntry();
      },
    );
  });
}
