import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import request from 'supertest';
import { apiClient, okData } from '#testing/api-client.js';
import { CatalogServer, indexDocument, syntheticEntry, syntheticSpec } from '#testing/catalog-server.js';
import { testMode } from '#testing/test-env.js';
import { startServer, type TestServer } from '#testing/test-server.js';

type Doc = {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>
  >;
  components: object;
};

/** Real Store answers (successes and failures) validate against their documented status and schema. */
describe(`store answers match the OpenAPI document (${testMode()})`, () => {
  let catalog: CatalogServer;
  let server: TestServer;
  let doc: Doc;

  before(async () => {
    catalog = await CatalogServer.start();
    catalog.set('index.json', indexDocument([syntheticEntry('conform', '1.0.0', { i18n: { en: { name: 'C' } } })]));
    catalog.set('items/conform/spec.yaml', syntheticSpec('conform', '1.0.0'));
    server = await startServer({ env: { SVC_STORE_SOURCES: catalog.url } });
    doc = okBody(await apiClient(server).get('/api/openapi.json'));
  });
  after(async () => {
    await server?.stop();
    await catalog?.stop();
  });

  it('every answer has a documented status and matches its schema', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    formats.default(ajv);
    const api = apiClient(server);
    const problems: string[] = [];
    const check = async (method: string, template: string, res: request.Response) => {
      const key = `${method} ${template} → ${res.status}`;
      const schema =
        doc.paths[template]?.[method.toLowerCase()]?.responses[String(res.status)]?.content?.['application/json']
          ?.schema;
      if (!schema) problems.push(`${key}: status not documented`);
      else {
        const validate = ajv.compile({ ...schema, components: doc.components });
        if (!validate(res.body)) problems.push(`${key}: ${ajv.errorsText(validate.errors)}`);
      }
      return res.body as { data?: Record<string, unknown> };
    };
    const space = okData<{ id: string }>(await api.post('/api/spaces', { name: 'Conformance' })).id;
    await check('POST', '/api/store/query', await api.post('/api/store/query', { locale: 'en' }));
    await check('POST', '/api/store/query', await api.post('/api/store/query', { pageSize: 0 }));
    await check('GET', '/api/store/apps', await api.get('/api/store/apps?search=conform'));
    await check('GET', '/api/store/apps/{slug}', await api.get('/api/store/apps/conform'));
    await check('GET', '/api/store/apps/{slug}', await api.get('/api/store/apps/nothing-here'));
    await check('GET', '/api/store/app-document', await api.get('/api/store/app-document?slug=conform'));
    await check('GET', '/api/store/capabilities', await api.get('/api/store/capabilities'));
    await check('GET', '/api/store/category-taxonomy', await api.get('/api/store/category-taxonomy'));
    await check('GET', '/api/store/discover-page', await api.get('/api/store/discover-page?pageSize=3'));
    await check('GET', '/api/skills/command-name', await api.get('/api/skills/command-name?name=Hello'));
    await check('GET', '/api/store/registries', await api.get('/api/store/registries'));
    const added = await check(
      'POST',
      '/api/store/registries',
      await api.post('/api/store/registries', { name: 'Mine', url: 'https://example.com/c', adapterConfig: { k: 1 } }),
    );
    const id = String(added.data?.id);
    await check(
      'POST',
      '/api/store/registries/{registryId}/toggle',
      await api.post(`/api/store/registries/${id}/toggle`, { enabled: false }),
    );
    await check(
      'PATCH',
      '/api/store/registries/{registryId}/adapter-config',
      await api.patch(`/api/store/registries/${id}/adapter-config`, { k: 2 }),
    );
    await check('DELETE', '/api/store/registries/{registryId}', await api.del(`/api/store/registries/${id}`));
    await check(
      'POST',
      '/api/store/registries',
      await api.post('/api/store/registries', { name: 'x', url: 'http://10.0.0.1' }),
    );
    const builtin = okData<Array<{ id: string }>>(await api.get('/api/store/registries'))[0]!.id;
    await check('DELETE', '/api/store/registries/{registryId}', await api.del(`/api/store/registries/${builtin}`));
    const installed = await check(
      'POST',
      '/api/store/install',
      await api.post('/api/store/install', { slug: 'conform', spaceId: space }),
    );
    const appId = String(installed.data?.appId);
    await check(
      'POST',
      '/api/store/install',
      await api.post('/api/store/install', { slug: 'conform', spaceId: space }),
    );
    await check(
      'POST',
      '/api/store/apps/{slug}/install',
      await api.post('/api/store/apps/conform/install', { spaceId: null }),
    );
    await check('POST', '/api/store/revalidate', await api.post('/api/store/revalidate'));
    await check('POST', '/api/store/refresh', await api.post('/api/store/refresh'));
    await check('GET', '/api/store/updates', await api.get('/api/store/updates'));
    await check('POST', '/api/store/updates/check-now', await api.post('/api/store/updates/check-now'));
    await check('POST', '/api/store/updates/{appId}/apply', await api.post(`/api/store/updates/${appId}/apply`, {}));
    await check(
      'POST',
      '/api/store/ignore-version',
      await api.post('/api/store/ignore-version', { appId, version: '9.0.0' }),
    );
    await check(
      'POST',
      '/api/store/import-dhpkg',
      await api.post('/api/store/import-dhpkg', { filePath: '/no/such.dhpkg' }),
    );
    await check('GET', '/api/store/my-publications', await api.get('/api/store/my-publications'));
    await check('POST', '/api/store/unpublish', await api.post('/api/store/unpublish', { slug: 'a/b' }));
    await check('POST', '/api/store/publish/preview', await api.post('/api/store/publish/preview', { appId }));
    await check(
      'POST',
      '/api/store/publish/find-app',
      await api.post('/api/store/publish/find-app', { slug: 'conform' }),
    );
    assert.deepEqual(problems, []);
  });
});

function okBody(res: request.Response): Doc {
  assert.equal(res.status, 200);
  return res.body as Doc;
}
