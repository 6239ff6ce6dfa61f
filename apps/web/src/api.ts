/**
 * The server's address, derived from the page's own location: the server answers every page
 * with a `<base href>` pointing at the app's root, so `document.baseURI` is that root whether
 * the app is served at `/`, under SVC_BASE_PATH or behind a proxy prefix.
 */
export function appRoot(): URL {
  return new URL('.', document.baseURI);
}

export function apiUrl(path: string): string {
  return new URL(path.replace(/^\//, ''), appRoot()).toString();
}

export function wsUrl(): string {
  const url = new URL('ws', appRoot());
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}

/** The live view socket of an AI browser page (docs/api/ai-browser.md, "Live view"). */
export function browserViewUrl(viewId: string): string {
  const url = new URL(`ws/browser/${encodeURIComponent(viewId)}`, appRoot());
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}

const TOKEN_KEY = 'svc-token';

export const session = {
  get token(): string | null {
    return sessionStorage.getItem(TOKEN_KEY);
  },
  set(token: string): void {
    sessionStorage.setItem(TOKEN_KEY, token);
  },
  clear(): void {
    sessionStorage.removeItem(TOKEN_KEY);
  },
};

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

/** Called when the server refuses the stored token (signed out elsewhere, password changed). */
let onUnauthorized: () => void = () => undefined;
export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

interface Envelope<T> {
  success: boolean;
  data?: T;
  error?: string;
  code?: string;
}

async function send<T>(method: string, path: string, body?: unknown, raw?: Blob | File): Promise<T> {
  // Names the web app to the server (the audit of a tool approval says who answered).
  const headers: Record<string, string> = { 'X-Svc-Client': 'web' };
  if (session.token) headers.Authorization = `Bearer ${session.token}`;
  let payload: BodyInit | undefined;
  if (raw) {
    headers['Content-Type'] = 'application/octet-stream';
    payload = raw;
  } else if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  let res: Response;
  try {
    res = await fetch(apiUrl(path), { method, headers, body: payload });
  } catch {
    throw new ApiError(0, 'Cannot reach the server');
  }
  const type = res.headers.get('content-type') ?? '';
  if (!type.includes('application/json')) {
    // An unknown route answers the web page: the server does not offer this operation.
    throw new ApiError(res.status === 200 ? 404 : res.status, 'Not available on this server');
  }
  const envelope = (await res.json()) as Envelope<T>;
  if (res.status === 401 && path !== '/api/remote/login') onUnauthorized();
  if (!res.ok || envelope.success === false) {
    const retry = Number(res.headers.get('Retry-After'));
    throw new ApiError(
      res.status,
      envelope.error ?? `Request failed (${res.status})`,
      envelope.code,
      Number.isFinite(retry) && retry > 0 ? retry : undefined,
    );
  }
  return envelope.data as T;
}

/**
 * An upload (raw bytes, `PUT`) that reports its progress: `fetch` cannot, so this one request
 * goes through XMLHttpRequest, with the same headers and the same envelope handling as `send`.
 */
function uploadWithProgress<T>(path: string, file: Blob, onProgress: (fraction: number) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', apiUrl(path));
    xhr.setRequestHeader('X-Svc-Client', 'web');
    if (session.token) xhr.setRequestHeader('Authorization', `Bearer ${session.token}`);
    xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable && e.total > 0) onProgress(e.loaded / e.total);
    };
    xhr.onerror = () => reject(new ApiError(0, 'Cannot reach the server'));
    xhr.onload = () => {
      let envelope: Envelope<T>;
      try {
        envelope = JSON.parse(xhr.responseText) as Envelope<T>;
      } catch {
        return reject(new ApiError(xhr.status === 200 ? 404 : xhr.status, 'Not available on this server'));
      }
      if (xhr.status === 401) onUnauthorized();
      if (xhr.status >= 400 || envelope.success === false) {
        return reject(new ApiError(xhr.status, envelope.error ?? `Request failed (${xhr.status})`, envelope.code));
      }
      onProgress(1);
      resolve(envelope.data as T);
    };
    xhr.send(file);
  });
}

export const api = {
  get: <T>(path: string) => send<T>('GET', path),
  post: <T>(path: string, body: unknown = {}) => send<T>('POST', path, body),
  put: <T>(path: string, body: unknown = {}) => send<T>('PUT', path, body),
  patch: <T>(path: string, body: unknown = {}) => send<T>('PATCH', path, body),
  del: <T>(path: string, body?: unknown) => send<T>('DELETE', path, body),
  upload: <T>(path: string, file: Blob) => send<T>('PUT', path, undefined, file),
  uploadWithProgress,
  /** A file's bytes (downloads and images), with the token in the header rather than the URL. */
  async blob(path: string): Promise<Blob> {
    const res = await fetch(apiUrl(path), { headers: { Authorization: `Bearer ${session.token ?? ''}` } });
    if (!res.ok) throw new ApiError(res.status, `Download failed (${res.status})`);
    return res.blob();
  },
};

export const q = (value: string): string => encodeURIComponent(value);
