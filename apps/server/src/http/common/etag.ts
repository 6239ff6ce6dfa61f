import { hash } from 'node:crypto';

/**
 * Express's default ETag (`etag` package, weak): `W/"<byte length in hex>-<first 27 characters
 * of the base64 SHA-1>"`, the same value, with Node's one-shot hash (no Hash object per answer;
 * the generic generator also copied every string body into a Buffer first). Installed as the
 * app's `etag` setting, so `res.send` / `res.json` and the direct JSON reply use it alike.
 */
export function weakEtag(body: string | Buffer, encoding?: BufferEncoding): string {
  const data = typeof body === 'string' && encoding && !/^utf-?8$/i.test(encoding) ? Buffer.from(body, encoding) : body;
  const length = typeof data === 'string' ? Buffer.byteLength(data, 'utf8') : data.length;
  return `W/"${length.toString(16)}-${hash('sha1', data, 'base64').substring(0, 27)}"`;
}
