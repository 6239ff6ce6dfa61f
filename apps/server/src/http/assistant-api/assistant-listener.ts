import { randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OpenAPIObject } from '@nestjs/swagger';
import { MASKED_SECRET } from '#contracts/models.js';
import { maskSecrets } from '#core/models/secret-masking.js';
import { ASSISTANT_EXTENSION } from './assistant.decorator.js';

/** Largest request body the listener takes (as the main API: 100 KB). */
const BODY_LIMIT = 100 * 1024;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/**
 * The header the listener's calls carry (its own token): a worker-role process, whose API is
 * otherwise closed, lets exactly these through to its routes.
 */
export const ASSISTANT_RELAY_HEADER = 'x-svc-assistant-relay';

/** Whether a request carries the listener's token in the relay header (constant-time compare). */
export function isRelayed(header: string | string[] | undefined, token: string | null): boolean {
  if (token === null || typeof header !== 'string') return false;
  const given = Buffer.from(header);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export interface AssistantOperation {
  method: string;
  /** `/api/spaces/{spaceId}` */
  template: string;
  pattern: RegExp;
}

export interface AssistantListener {
  url: string;
  token: string;
  /** Read from the OpenAPI document, built on first use (the server builds it once it listens). */
  operations(): Promise<AssistantOperation[]>;
  close(): Promise<void>;
}

/** The operations the OpenAPI document marks `Assistant`. */
export function assistantOperations(doc: OpenAPIObject): AssistantOperation[] {
  const out: AssistantOperation[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = (item as Record<string, Record<string, unknown> | undefined>)[method];
      if (op?.[ASSISTANT_EXTENSION] !== true) continue;
      const source = template
        .split(/\{[^}]+\}/)
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('[^/]+');
      out.push({ method: method.toUpperCase(), template, pattern: new RegExp(`^${source}$`) });
    }
  }
  return out;
}

/**
 * The assistant's own listener on 127.0.0.1 (a random port, its own random token): it answers
 * only operations marked `Assistant`, passes them to the main API with the access password
 * (which never leaves this process) and masks secrets in the answers. Everything else: 401
 * without its token, 403 for an operation not open to the assistant.
 */
export async function startAssistantListener(input: {
  /** The OpenAPI document (built on first call): the listener listens at once, and its calls wait for it. */
  doc: () => Promise<OpenAPIObject>;
  /** Where the main API answers, e.g. `http://127.0.0.1:8080/svc` (base path included). */
  target: string;
  password: string;
}): Promise<AssistantListener> {
  const token = randomBytes(32).toString('base64url');
  let known: Promise<AssistantOperation[]> | null = null;
  // A document that fails answers the calls 502 (below).
  const operations = (): Promise<AssistantOperation[]> => (known ??= input.doc().then(assistantOperations));
  const expected = Buffer.from(`Bearer ${token}`);
  const hide = [input.password, token];
  const server = http.createServer((req, res) => {
    void handle(req, res).catch(() => {
      if (!res.headersSent) send(res, 502, { success: false, error: 'The service API did not answer' });
      else res.end();
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const given = Buffer.from(req.headers.authorization ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return send(res, 401, { success: false, error: 'Invalid token' });
    }
    const url = new URL(req.url ?? '/', 'http://assistant.local');
    const method = (req.method ?? 'GET').toUpperCase();
    const open = (await operations()).some((o) => o.method === method && o.pattern.test(url.pathname));
    if (!open) {
      return send(res, 403, {
        success: false,
        error: `This operation is not open to the assistant: ${method} ${url.pathname}`,
      });
    }
    const body = await readBody(req);
    if (body === 'too-large') return send(res, 413, { success: false, error: 'Request body too large' });
    const answer = await fetch(`${input.target}${url.pathname}${url.search}`, {
      method,
      headers: {
        Authorization: `Bearer ${input.password}`,
        [ASSISTANT_RELAY_HEADER]: token,
        ...(body.length > 0 ? { 'Content-Type': 'application/json' } : {}),
      },
      ...(body.length > 0 && method !== 'GET' ? { body } : {}),
    });
    const text = await answer.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return sendText(res, answer.status, hideAll(text, hide));
    }
    // Secret-named fields become "***"; the password and this listener's token never appear.
    send(res, answer.status, hideDeep(maskSecrets(json), hide));
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    operations,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function hideAll(text: string, secrets: string[]): string {
  let out = text;
  for (const secret of secrets) if (secret !== '') out = out.split(secret).join(MASKED_SECRET);
  return out;
}

/** `hideAll` in every string (keys included) of a JSON value. */
function hideDeep(value: unknown, secrets: string[]): unknown {
  if (typeof value === 'string') return hideAll(value, secrets);
  if (Array.isArray(value)) return value.map((v) => hideDeep(v, secrets));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [hideAll(k, secrets), hideDeep(v, secrets)]));
  }
  return value;
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
}

function sendText(res: http.ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(text);
}

async function readBody(req: http.IncomingMessage): Promise<Buffer | 'too-large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) return 'too-large';
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
