import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import type { Request, Response } from 'express';
import mime from 'mime-types';

/** dist/apps/server/src/http/web → dist/web, where `vite build` puts the app. */
export const WEB_DIR = fileURLToPath(new URL('../../../../../web/', import.meta.url));

const BASE_MARK = '<!--svc:base-->';
const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';
/**
 * The app's page: its own scripts and styles only, images also from blob: URLs (opened
 * files), frames from blob: URLs only (a PDF preview, its blob typed application/pdf by the
 * app), the API and the event stream on the same origin, never framed itself.
 */
const PAGE_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; " +
  "connect-src 'self'; frame-src blob:; object-src 'none'; base-uri 'self'; frame-ancestors 'none'";

interface Variant {
  body: Buffer;
  gzip?: Buffer;
  br?: Buffer;
}
interface StaticFile extends Variant {
  type: string;
  etag: string;
  cache: string;
}

const etagOf = (body: Buffer): string => `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;

/**
 * The built web app, read once into memory (a few hundred KB): hashed files under `assets/`
 * are immutable, everything else revalidates; each is sent as its precompressed .br or .gz
 * sibling when the client accepts it. Every other GET gets index.html with a `<base href>`
 * leading from the requested path back to the app's root, so its relative URLs, and the API
 * and socket addresses it derives from them, hold at `/`, under SVC_BASE_PATH and behind any
 * proxy prefix.
 */
export class WebApp {
  private readonly files = new Map<string, StaticFile>();
  private readonly pages = new Map<string, StaticFile>();
  private readonly template: string;

  private constructor(dir: string) {
    const walk = (folder: string, prefix: string): void => {
      for (const name of readdirSync(folder)) {
        const full = join(folder, name);
        if (statSync(full).isDirectory()) walk(full, `${prefix}${name}/`);
        else if (!name.endsWith('.gz') && !name.endsWith('.br') && name !== 'index.html') {
          const body = readFileSync(full);
          this.files.set(`/${prefix}${name}`, {
            body,
            gzip: readIfThere(`${full}.gz`),
            br: readIfThere(`${full}.br`),
            type: mime.contentType(extname(name)) || 'application/octet-stream',
            etag: etagOf(body),
            cache: prefix === 'assets/' ? IMMUTABLE : REVALIDATE,
          });
        }
      }
    };
    walk(dir, '');
    this.template = readFileSync(join(dir, 'index.html'), 'utf8');
  }

  /** The app in `dir`, or null when it was not built (the server then answers a plain sign-in page). */
  static load(dir = WEB_DIR): WebApp | null {
    try {
      return new WebApp(dir);
    } catch {
      return null;
    }
  }

  /** Answers a GET or HEAD (`path` is what is left after the server's own base path). */
  send(req: Request, res: Response, path: string): void {
    const file = this.files.get(path) ?? this.page(path);
    res.setHeader('Cache-Control', file.cache);
    res.setHeader('ETag', file.etag);
    res.setHeader('Vary', 'Accept-Encoding');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (file.type.startsWith('text/html')) res.setHeader('Content-Security-Policy', PAGE_POLICY);
    if (req.headers['if-none-match'] === file.etag) {
      res.status(304).end();
      return;
    }
    const accepted = String(req.headers['accept-encoding'] ?? '');
    const [encoding, body] =
      file.br && /\bbr\b/.test(accepted)
        ? ['br', file.br]
        : file.gzip && /\bgzip\b/.test(accepted)
          ? ['gzip', file.gzip]
          : [undefined, file.body];
    if (encoding) res.setHeader('Content-Encoding', encoding);
    res.status(200).type(file.type).send(body);
  }

  /** index.html for a path: `<base href>` climbs one level per folder of the path. */
  private page(path: string): StaticFile {
    const depth = Math.max(0, path.split('/').length - 2);
    const base = depth === 0 ? './' : '../'.repeat(depth);
    let page = this.pages.get(base);
    if (!page) {
      const body = Buffer.from(this.template.replace(BASE_MARK, `<base href="${base}">`));
      page = {
        body,
        gzip: gzipSync(body),
        br: brotliCompressSync(body),
        type: 'text/html; charset=utf-8',
        etag: etagOf(body),
        cache: REVALIDATE,
      };
      if (this.pages.size < 64) this.pages.set(base, page);
    }
    return page;
  }
}

function readIfThere(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}
