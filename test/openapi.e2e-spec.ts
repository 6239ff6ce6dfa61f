import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import request from 'supertest';
import { BODYLESS_OPERATIONS, RAW_BODY_OPERATIONS } from '../apps/server/src/http/openapi/documented-bodies.js';
import { apiClient, authHeaders } from '#testing/api-client.js';
import { startServer, type TestServer } from '#testing/test-server.js';

type Schema = {
  $ref?: string;
  oneOf?: Schema[];
  required?: string[];
  properties?: Record<string, Schema & { const?: unknown }>;
};

type Doc = {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      {
        requestBody?: { content: Record<string, { schema: unknown }> };
        responses: Record<string, unknown>;
        security?: unknown[];
        summary?: string;
        description?: string;
        tags?: string[];
        operationId?: string;
        parameters?: Array<{ name: string; in: string; required?: boolean; schema?: { type?: string } }>;
      }
    >
  >;
  tags?: Array<{ name: string; description?: string }>;
  servers?: Array<{ url: string; description?: string }>;
  components: {
    schemas: Record<string, { type?: string; required?: string[]; properties?: Record<string, unknown> }>;
    securitySchemes?: Record<string, unknown>;
  };
};

/** `:id` and wildcard `*path` parameters (`/hooks/*path`: several segments) as OpenAPI `{…}`. */
const toOpenApiPath = (expressPath: string): string => expressPath.replace(/[:*]([A-Za-z0-9_]+)/g, '{$1}');

/** Every `$ref` in `value`. */
function refsOf(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refsOf(v, out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refsOf(v, out);
    }
  }
  return out;
}

describe('OpenAPI document and reference page', () => {
  let server: TestServer;
  let doc: Doc;

  before(async () => {
    server = await startServer();
    const res = await apiClient(server).get('/api/openapi.json');
    assert.equal(res.status, 200);
    doc = res.body as Doc;
  });
  after(() => server?.stop());

  it('is served behind the token as OpenAPI 3.1', async () => {
    const none = await request(server.url).get('/api/openapi.json');
    assert.deepEqual([none.status, none.body], [401, { success: false, error: 'No authorization token' }]);
    assert.equal(doc.openapi, '3.1.0');
  });

  it('documents every route the server registered, and nothing else', async () => {
    const routes = (await apiClient(server).get('/api/test/routes')).body.data as string[];
    assert.ok(routes.length > 40, `routes: ${routes.length}`);
    const registered = new Set(
      routes.map((r) => {
        const [method, path] = r.split(' ');
        return `${method} ${toOpenApiPath(path!)}`;
      }),
    );
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`)),
    );
    assert.deepEqual(
      [...registered].filter((r) => !documented.has(r)),
      [],
      'routes missing from the document',
    );
    assert.deepEqual(
      [...documented].filter((r) => !registered.has(r)),
      [],
      'documented operations with no route',
    );
  });

  it('documents each parameter of a path, in its order, as a required string path parameter', () => {
    const wrong: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      const want = [...path.matchAll(/\{(\w+)\}/g)].map((m) => `${m[1]} required string`);
      for (const [method, op] of Object.entries(item)) {
        const got = (op.parameters ?? [])
          .filter((p) => p.in === 'path')
          .map((p) => `${p.name} ${p.required ? 'required' : 'optional'} ${p.schema?.type}`);
        if (got.join(', ') !== want.join(', ')) wrong.push(`${method.toUpperCase()} ${path}: ${got.join(', ')}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('gives every operation a summary, a description that says more, and one tag, an operation group of the document', () => {
    const groups = new Map((doc.tags ?? []).map((t) => [t.name, t.description]));
    const problems: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const key = `${method.toUpperCase()} ${path}`;
        const summary = op.summary?.trim() ?? '';
        if (!summary) problems.push(`${key}: no summary (add @ApiOperation({ summary }))`);
        else if (summary.length > 90 || summary.endsWith('.'))
          problems.push(`${key}: summary "${summary}" (short, no full stop)`);
        const description = op.description?.trim() ?? '';
        if (!description || description === summary)
          problems.push(`${key}: no description beyond its summary (add @ApiOperation({ description }))`);
        if (op.tags?.length !== 1)
          problems.push(`${key}: tags ${JSON.stringify(op.tags)} (add @ApiTags('<group>') to its controller)`);
        else if (!groups.get(op.tags[0]!))
          problems.push(`${key}: tag ${op.tags[0]} is not a group of openapi/groups.ts`);
      }
    }
    assert.deepEqual(problems, []);
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    assert.equal(new Set(ids).size, ids.length, 'operation ids are unique');
    const used = new Set(
      Object.values(doc.paths).flatMap((item) => Object.values(item).flatMap((op) => op.tags ?? [])),
    );
    assert.deepEqual(
      [...groups.keys()].filter((g) => !used.has(g)),
      [],
      'the document lists only the groups in use',
    );
  });

  it('describes the server, the password scheme and the query parameters as a client generator needs them', () => {
    assert.deepEqual(doc.servers, [{ url: '/', description: 'This server' }]);
    const scheme = doc.components.securitySchemes?.password as Record<string, unknown>;
    assert.deepEqual([scheme.type, scheme.scheme, scheme.bearerFormat], ['http', 'bearer', undefined]);
    assert.match(String(scheme.description), /access password/);
    const query = (method: string, path: string) =>
      Object.fromEntries(
        (doc.paths[path]?.[method]?.parameters ?? [])
          .filter((p) => p.in === 'query')
          .map((p) => [p.name, `${p.required ? 'required' : 'optional'} ${p.schema?.type}`]),
      );
    for (const path of ['/api/artifacts/content', '/api/artifacts/detect-type', '/api/artifacts/download']) {
      assert.deepEqual(query('get', path), { path: 'required string' }, path);
    }
    assert.deepEqual(query('put', '/api/spaces/{spaceId}/artifacts/upload'), { path: 'required string' });
    assert.deepEqual(query('get', '/api/spaces/{spaceId}/artifacts/query'), {
      q: 'required string',
      limit: 'optional integer',
    });
    assert.deepEqual(query('get', '/api/spaces/{spaceId}/artifacts'), { maxDepth: 'optional integer' });
    assert.deepEqual(query('get', '/api/spaces/{spaceId}/conversations/{conversationId}'), { from: 'optional string' });
    assert.deepEqual(query('get', '/api/store/discover-page'), {
      locale: 'optional string',
      pageSize: 'optional integer',
    });
    assert.deepEqual(query('get', '/api/apps'), { spaceId: 'optional string', status: 'optional string' });
    assert.deepEqual(query('get', '/api/apps/{appId}/activity'), {
      limit: 'optional integer',
      before: 'optional number',
    });
    assert.deepEqual(query('delete', '/api/apps/{appId}'), { purge: 'optional boolean' });
    assert.deepEqual(Object.values(query('get', '/api/store/apps')), [
      'optional string',
      'optional string',
      'optional string',
      'optional string',
      'optional string',
    ]);
    const queryDtos = ['PathQuery', 'ArtifactSearchQuery', 'AppListQuery', 'DiscoverQueryDto', 'StoreListQuery'];
    assert.deepEqual(
      queryDtos.filter((n) => doc.components.schemas[n]),
      [],
      'query DTOs are parameters, not schemas',
    );
    const hook = doc.paths['/hooks/{path}']!.post!;
    assert.deepEqual(
      hook.parameters?.map((p) => [p.name, p.in, p.required]),
      [['path', 'path', true]],
    );
    const download = doc.paths['/api/artifacts/download']!.get!.responses['200'] as { content: object };
    assert.deepEqual(Object.keys(download.content), ['*/*'], "a download answers the file's own media type");
  });

  it('gives every POST and PUT a request body schema with its fields', () => {
    const missing: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const key = `${method.toUpperCase()} ${path}`;
        if ((method !== 'post' && method !== 'put') || BODYLESS_OPERATIONS.has(key)) continue;
        if (!path.startsWith('/api/')) continue;
        if (RAW_BODY_OPERATIONS.has(key)) {
          if (!op.requestBody?.content['application/octet-stream']) missing.push(key);
          continue;
        }
        const schema = op.requestBody?.content['application/json']?.schema as
          { $ref?: string; type?: string; properties?: object } | undefined;
        const resolved = schema?.$ref ? doc.components.schemas[schema.$ref.split('/').pop()!] : schema;
        if (!resolved || resolved.type !== 'object' || !resolved.properties) missing.push(key);
      }
    }
    assert.deepEqual(missing, [], 'operations without a described body: add a DTO or an entry in documented-bodies.ts');
  });

  it('describes the error envelope on every API operation, and which operations are public', () => {
    const envelope = doc.components.schemas.ErrorEnvelope;
    assert.deepEqual(Object.keys(envelope?.properties ?? {}).sort(), ['code', 'error', 'success']);
    const publicOps = ['/api/remote/status', '/api/security/policy'];
    for (const [path, item] of Object.entries(doc.paths)) {
      if (!path.startsWith('/api/')) continue;
      for (const [method, op] of Object.entries(item)) {
        assert.match(JSON.stringify(op.responses['500']), /ErrorEnvelope/, `${method} ${path} 500`);
        if (publicOps.includes(path)) assert.equal(op.responses['401'], undefined, `${method} ${path} is public`);
        else assert.match(JSON.stringify(op.responses['401']), /ErrorEnvelope/, `${method} ${path} 401`);
        if (op.requestBody) assert.ok(op.responses['400'] && op.responses['413'], `${method} ${path} 400/413`);
        if (path.includes('{')) assert.ok(op.responses['404'], `${method} ${path} 404`);
      }
    }
    assert.deepEqual(doc.paths['/api/remote/login']!.post!.security, []);
    assert.ok(doc.paths['/api/remote/login']!.post!.responses['429'], 'login documents the lockout');
    assert.equal(doc.paths['/api/spaces']!.get!.security, undefined, 'the global bearer requirement applies');
    const missingRefs = refsOf(doc).filter((r) => !doc.components.schemas[r.split('/').pop()!]);
    assert.deepEqual(missingRefs, [], 'dangling $refs');
  });

  it('gives every API operation its response schema: the success envelope with its data', () => {
    const missing: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      if (!path.startsWith('/api/')) continue;
      for (const [method, op] of Object.entries(item)) {
        const ok = op.responses['200'] as { content?: Record<string, { schema: Schema }> } | undefined;
        const bytes = Object.entries(ok?.content ?? {}).some(
          ([type, c]) => type !== 'application/json' && (c.schema as { format?: string }).format === 'binary',
        );
        if (bytes) continue; // a file's bytes (downloads, package exports)
        let schema = ok?.content?.['application/json']?.schema;
        if (schema?.oneOf) schema = schema.oneOf.find((s) => !s.$ref);
        const described =
          schema?.properties?.success?.const === true &&
          (schema.properties.data === undefined || Object.keys(schema.properties.data).length > 0);
        if (!described) missing.push(`${method.toUpperCase()} ${path}`);
      }
    }
    assert.deepEqual(
      missing,
      [],
      'operations without a response schema: add @ApiData(...) or @ApiDone() (api-data.ts)',
    );
    const space = doc.paths['/api/spaces/{spaceId}']!.get!.responses['200'] as object;
    assert.match(JSON.stringify(space), /"data":\{"\$ref":"#\/components\/schemas\/Space"\}/);
    assert.deepEqual(
      doc.components.schemas.Space?.properties && Object.keys(doc.components.schemas.Space.properties).sort(),
      ['color', 'createdAt', 'icon', 'id', 'isTemp', 'name', 'path', 'preferences', 'updatedAt'],
    );
    const bodyless = doc.paths['/api/spaces/{spaceId}']!.delete!.responses['200'] as object;
    assert.doesNotMatch(JSON.stringify(bodyless), /"data"/, 'operations answering {success:true} alone say so');
  });

  it('matches what the server answers: a created space has every required field of its schema', async () => {
    const created = await apiClient(server).post('/api/spaces', { name: 'schema check' });
    assert.equal(created.status, 200);
    const schema = doc.components.schemas.Space as { required?: string[] };
    assert.ok(schema.required && schema.required.length > 5);
    const absent = schema.required.filter((k) => !(k in created.body.data));
    assert.deepEqual(absent, [], 'required fields missing from the answer');
    const extra = Object.keys(created.body.data).filter(
      (k) => !(k in (doc.components.schemas.Space!.properties ?? {})),
    );
    assert.deepEqual(extra, [], 'answered fields the schema does not list');
  });

  it('matches what the server answers: real answers validate against their documented status and schema', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    formats.default(ajv);
    const checked: string[] = [];
    const problems: string[] = [];
    /** Calls `path` (concrete) documented as `template`, checks status and body against the document. */
    const call = async (method: 'get' | 'post' | 'put' | 'delete', template: string, path: string, body?: object) => {
      let req = request(server.url)[method](path).set(authHeaders(server));
      if (body !== undefined) req = req.send(body);
      const res = await req;
      const key = `${method.toUpperCase()} ${template} → ${res.status}`;
      const response = doc.paths[template]?.[method]?.responses[String(res.status)] as
        { content?: Record<string, { schema: object }> } | undefined;
      const schema = response?.content?.['application/json']?.schema;
      if (!schema) problems.push(`${key}: status not documented`);
      else {
        const validate = ajv.compile({ ...schema, components: doc.components });
        if (!validate(res.body))
          problems.push(`${key}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(res.body).slice(0, 300)}`);
      }
      checked.push(key);
      return res.body as { data?: Record<string, unknown> & { id?: string; path?: string } };
    };

    await call('get', '/api/remote/status', '/api/remote/status');
    await call('get', '/api/security/policy', '/api/security/policy');
    await call('get', '/api/system/version', '/api/system/version');
    const space = (await call('post', '/api/spaces', '/api/spaces', { name: 'conformance' })).data!;
    const s = `/api/spaces/${space.id}`;
    await call('post', '/api/spaces', '/api/spaces', {});
    await call('get', '/api/spaces', '/api/spaces');
    await call('get', '/api/spaces/{spaceId}', s);
    await call('get', '/api/spaces/{spaceId}', '/api/spaces/no-such-space');
    await call('put', '/api/spaces/{spaceId}', s, { name: 'conformance 2' });
    await call('get', '/api/spaces/default-path', '/api/spaces/default-path');
    await call('get', '/api/spaces/svc', '/api/spaces/svc');
    await call('get', '/api/spaces/{spaceId}/memory', `${s}/memory`);
    await call('get', '/api/spaces/{spaceId}/preferences', `${s}/preferences`);
    await call('put', '/api/spaces/{spaceId}/preferences', `${s}/preferences`, { memory: { enabled: false } });
    await call('post', '/api/spaces/{spaceId}/open', `${s}/open`);

    const conv = (await call('post', '/api/spaces/{spaceId}/conversations', `${s}/conversations`, { title: 't' }))
      .data!;
    const c = `${s}/conversations/${conv.id}`;
    await call('get', '/api/spaces/{spaceId}/conversations', `${s}/conversations`);
    await call('put', '/api/spaces/{spaceId}/conversations/{conversationId}', c, { title: 'renamed' });
    const thoughts = [{ id: 'th1', type: 'thinking', content: 'hmm', timestamp: new Date().toISOString() }];
    const message = (
      await call('post', '/api/spaces/{spaceId}/conversations/{conversationId}/messages', `${c}/messages`, {
        role: 'assistant',
        content: 'hello',
        thoughts,
      })
    ).data!;
    await call('put', '/api/spaces/{spaceId}/conversations/{conversationId}/messages/last', `${c}/messages/last`, {
      content: 'hello again',
    });
    await call('get', '/api/spaces/{spaceId}/conversations/{conversationId}', c);
    await call(
      'get',
      '/api/spaces/{spaceId}/conversations/{conversationId}/messages/{messageId}/thoughts',
      `${c}/messages/${message.id}/thoughts`,
    );
    await call('post', '/api/spaces/{spaceId}/conversations/{conversationId}/star', `${c}/star`, { starred: true });

    const file = (
      await call('post', '/api/spaces/{spaceId}/artifacts/file', `${s}/artifacts/file`, {
        name: 'a.md',
        content: '# A',
      })
    ).data!;
    await call('get', '/api/spaces/{spaceId}/artifacts', `${s}/artifacts`);
    await call('get', '/api/spaces/{spaceId}/artifacts/tree', `${s}/artifacts/tree`);
    await call('post', '/api/spaces/{spaceId}/artifacts/children', `${s}/artifacts/children`, {
      dirPath: space.path,
    });
    const q = encodeURIComponent(String(file.path));
    await call('get', '/api/artifacts/content', `/api/artifacts/content?path=${q}`);
    await call('get', '/api/artifacts/detect-type', `/api/artifacts/detect-type?path=${q}`);
    await call('get', '/api/spaces/{spaceId}/artifacts/query', `${s}/artifacts/query?q=a`);

    const sources = (
      await call('post', '/api/ai-sources/sources', '/api/ai-sources/sources', {
        name: 'local',
        provider: 'openai',
        apiUrl: 'http://127.0.0.1:9/v1',
        apiKey: 'sk-conformance',
        model: 'gpt-4o',
      })
    ).data as { sources: Array<{ id: string }> };
    await call('post', '/api/ai-sources/switch-source', '/api/ai-sources/switch-source', {
      sourceId: sources.sources[0]!.id,
    });
    await call('post', '/api/ai-sources/set-model', '/api/ai-sources/set-model', { modelId: 'gpt-4o' });
    await call('get', '/api/config', '/api/config');

    await call('get', '/api/agent/sessions', '/api/agent/sessions');
    await call('get', '/api/agent/session/{conversationId}', `/api/agent/session/${conv.id}`);
    await call('get', '/api/agent/generating/{conversationId}', `/api/agent/generating/${conv.id}`);
    await call('get', '/api/agent/engine-capabilities', '/api/agent/engine-capabilities');
    await call('post', '/api/agent/toolsets/list', '/api/agent/toolsets/list', { spaceId: space.id });
    await call('post', '/api/agent/answer-question', '/api/agent/answer-question', {
      conversationId: conv.id,
      id: 'ask-none',
      answers: {},
    });
    await call('get', '/api/apps', '/api/apps');

    await call('delete', '/api/spaces/{spaceId}/conversations/{conversationId}', c);
    await call('delete', '/api/spaces/{spaceId}', s);
    assert.deepEqual(problems, [], `checked: ${checked.length}`);
    assert.ok(checked.length >= 40, `${checked.length} answers checked`);
  });

  it('renders the reference page from local assets (works offline)', async () => {
    const res = await request(server.url).get('/api/docs');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /text\/html/);
    assert.match(res.text, /SwaggerUIBundle\(/);
    assert.doesNotMatch(res.text, /<(script|link)[^>]+(src|href)="https?:/i, 'no CDN');
  });

  it('still answers unknown GET /api/... paths with the web page', async () => {
    const res = await apiClient(server).get('/api/no-such-thing');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /text\/html/);
  });
});
