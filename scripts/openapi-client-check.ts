/**
 * A client that no one here wrote by hand: the types come from the server's own OpenAPI document
 * (`openapi-typescript`, into a temporary folder, imported here as `svc-openapi`), the calls go
 * through `openapi-fetch`, and the whole is compiled with `tsc --strict`. It runs an everyday
 * flow against a running server: sign in, create a space, write, list, search, read, upload and
 * download a file, send a message and read the conversation, install a digital human and deliver
 * a webhook to it, list the Store and install from it.
 *
 * test/openapi-client.e2e-spec.ts generates the types, compiles this file and runs it with
 *   SVC_URL       the server's base URL (with its SVC_BASE_PATH, if any)
 *   SVC_PASSWORD  the access password
 *   STORE_SLUG    a slug the server's Store lists (optional: the Store install is skipped without it)
 * A call that does not compile against the document (a missing or mistyped parameter, body or
 * answer) fails the build; one that the server answers otherwise than documented fails the run.
 */
import createClient from 'openapi-fetch';
import type { paths } from 'svc-openapi';

const baseUrl = required('SVC_URL');
const password = required('SVC_PASSWORD');
const storeSlug = process.env.STORE_SLUG;

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

function check(condition: unknown, what: string): asserts condition {
  if (!condition) throw new Error(`client check failed: ${what}`);
}

/** The `data` of a success, or a failure naming the call, its status and its error. */
function ok<T>(call: string, result: { data?: T; error?: unknown; response: Response }): NonNullable<T> {
  if (result.data === undefined || result.data === null || result.error !== undefined) {
    throw new Error(`${call} answered ${result.response.status}: ${JSON.stringify(result.error)}`);
  }
  return result.data as NonNullable<T>;
}

const steps: string[] = [];
const step = (name: string): void => {
  steps.push(name);
  process.stdout.write(`ok ${steps.length} - ${name}\n`);
};

async function main(): Promise<void> {
  // Sign in: the public probe, then the password check; every later call carries the password.
  const anonymous = createClient<paths>({ baseUrl });
  const status = ok('GET /api/remote/status', await anonymous.GET('/api/remote/status'));
  check(status.success && typeof status.data.version === 'string', 'remote status');
  const refused = await anonymous.GET('/api/spaces');
  check(refused.response.status === 401 && refused.error?.success === false, 'no password: 401 with the envelope');
  const login = ok('POST /api/remote/login', await anonymous.POST('/api/remote/login', { body: { token: password } }));
  check(login.success, 'login');
  const api = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${password}` } });
  step('signed in');

  // A space.
  const created = ok('POST /api/spaces', await api.POST('/api/spaces', { body: { name: 'Client check' } }));
  const space = created.data;
  const spacePath = { spaceId: space.id };
  const spaces = ok('GET /api/spaces', await api.GET('/api/spaces'));
  check(
    spaces.data.some((s) => s.id === space.id),
    'the new space is listed',
  );
  step(`created space ${space.id}`);

  // Write, list, search and read a file.
  const written = ok(
    'POST artifacts/file',
    await api.POST('/api/spaces/{spaceId}/artifacts/file', {
      params: { path: spacePath },
      body: { name: 'notes.md', content: '# Notes\n\nwritten by the generated client\n' },
    }),
  );
  const filePath = written.data.path;
  const listed = ok(
    'GET artifacts',
    await api.GET('/api/spaces/{spaceId}/artifacts', { params: { path: spacePath, query: { maxDepth: 2 } } }),
  );
  check(
    listed.data.some((entry) => entry.name === 'notes.md'),
    'the file is listed',
  );
  const found = ok(
    'GET artifacts/query',
    await api.GET('/api/spaces/{spaceId}/artifacts/query', {
      params: { path: spacePath, query: { q: 'notes', limit: 5 } },
    }),
  );
  check(Array.isArray(found.data.items) && typeof found.data.indexing === 'boolean', 'search answers its shape');
  const read = ok(
    'GET /api/artifacts/content',
    await api.GET('/api/artifacts/content', { params: { query: { path: filePath } } }),
  );
  check(read.data.content.includes('written by the generated client'), 'the file reads back');
  const type = ok(
    'GET /api/artifacts/detect-type',
    await api.GET('/api/artifacts/detect-type', { params: { query: { path: filePath } } }),
  );
  check(type.data.isText, 'a markdown file is text');
  step('wrote, listed, searched and read a file');

  // Upload raw bytes, download them back.
  const uploaded = ok(
    'PUT artifacts/upload',
    await api.PUT('/api/spaces/{spaceId}/artifacts/upload', {
      params: { path: spacePath, query: { path: 'hello.txt' } },
      body: 'hello, bytes',
      bodySerializer: (body) => body,
      headers: { 'Content-Type': 'application/octet-stream' },
    }),
  );
  check(uploaded.data.size === 12, 'upload size');
  const downloaded = await api.GET('/api/artifacts/download', {
    params: { query: { path: uploaded.data.path } },
    parseAs: 'text',
  });
  check(downloaded.response.status === 200 && downloaded.data === 'hello, bytes', 'download answers the bytes');
  step('uploaded and downloaded a file');

  // A message to the assistant, then the conversation read back.
  const conversation = ok(
    'POST conversations',
    await api.POST('/api/spaces/{spaceId}/conversations', { params: { path: spacePath }, body: { title: 'Hello' } }),
  ).data;
  const conversationPath = { spaceId: space.id, conversationId: conversation.id };
  const sent = ok(
    'POST /api/agent/message',
    await api.POST('/api/agent/message', {
      body: { spaceId: space.id, conversationId: conversation.id, message: 'Say hello.' },
    }),
  );
  check(sent.success, 'message accepted');
  let reply: { role: string; content: string; id: string } | undefined;
  for (let i = 0; i < 200 && !reply; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const generating = ok(
      'GET generating',
      await api.GET('/api/agent/generating/{conversationId}', {
        params: { path: { conversationId: conversation.id } },
      }),
    );
    if (generating.data) continue;
    const stored = ok(
      'GET conversation',
      await api.GET('/api/spaces/{spaceId}/conversations/{conversationId}', { params: { path: conversationPath } }),
    );
    reply = stored.data.messages.find((m) => m.role === 'assistant' && m.content.length > 0);
  }
  check(reply, 'the assistant replied, and the reply is stored');
  const fromReply = ok(
    'GET conversation from',
    await api.GET('/api/spaces/{spaceId}/conversations/{conversationId}', {
      params: { path: conversationPath, query: { from: reply.id } },
    }),
  );
  check(
    fromReply.data.messages.length === 1 && fromReply.data.messages[0]?.id === reply.id,
    'from: the messages start at the reply',
  );
  step('sent a message and read the conversation');

  // A digital human with a webhook subscription; a delivery to it, which needs no password.
  const hookPath = `client-check-${Date.now()}`;
  const installed = ok(
    'POST /api/apps/install',
    await api.POST('/api/apps/install', {
      body: {
        spaceId: space.id,
        spec: {
          spec_version: '1',
          name: 'Client check',
          version: '1.0.0',
          author: 'client-check',
          description: 'Installed by the generated client.',
          type: 'automation',
          system_prompt: 'Report what arrived.',
          subscriptions: [{ id: 'hook', source: { type: 'webhook', config: { path: hookPath } } }],
        },
      },
    }),
  );
  const appId = installed.data.appId;
  const apps = ok('GET /api/apps', await api.GET('/api/apps', { params: { query: { spaceId: space.id } } }));
  check(
    apps.data.some((a) => a.id === appId),
    'the digital human is listed in its space',
  );
  const everywhere = ok('GET /api/apps (no filter)', await api.GET('/api/apps'));
  check(
    everywhere.data.some((a) => a.id === appId),
    'filters are optional',
  );
  const delivered = ok(
    'POST /hooks/{path}',
    await anonymous.POST('/hooks/{path}', { params: { path: { path: hookPath } }, body: { hello: 'world' } }),
  );
  check(delivered.ok && delivered.received, 'the webhook delivery is received');
  const activity = ok(
    'GET activity',
    await api.GET('/api/apps/{appId}/activity', { params: { path: { appId }, query: { limit: 10 } } }),
  );
  check(Array.isArray(activity.data), 'activity entries');
  step('installed a digital human and delivered a webhook to it');

  // The Store: browse, the legacy list, and an install from it.
  const page = ok('POST /api/store/query', await api.POST('/api/store/query', { body: {} }));
  const legacy = ok('GET /api/store/apps', await api.GET('/api/store/apps'));
  check(Array.isArray(legacy.data), 'the legacy list');
  ok(
    'GET /api/store/discover-page',
    await api.GET('/api/store/discover-page', { params: { query: { locale: 'en', pageSize: 5 } } }),
  );
  if (storeSlug) {
    check(
      page.data.items.some((item) => item.slug === storeSlug),
      `the Store lists ${storeSlug}`,
    );
    const fromStore = ok(
      'POST /api/store/apps/{slug}/install',
      await api.POST('/api/store/apps/{slug}/install', {
        params: { path: { slug: storeSlug } },
        body: { spaceId: space.id },
      }),
    );
    check(typeof fromStore.data.appId === 'string', 'installed from the Store');
  }
  step('listed the Store' + (storeSlug ? ' and installed from it' : ''));

  // Clean up: the space goes with its files, conversations and digital humans.
  ok('DELETE space', await api.DELETE('/api/spaces/{spaceId}', { params: { path: spacePath } }));
  const gone = await api.GET('/api/spaces/{spaceId}', { params: { path: spacePath } });
  check(gone.response.status === 404 && gone.error?.success === false, 'the deleted space answers 404');
  step('deleted the space');
  process.stdout.write(`${steps.length} steps passed\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
