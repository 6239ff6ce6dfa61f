/**
 * Request bodies of operations whose controllers read an untyped body (no DTO class, so
 * nothing to generate from). Written from the specification; prefer a class-validator DTO
 * for new operations, whose schema is generated. Keys are `METHOD /openapi/{path}`.
 */
import { obj, str } from './schema.js';

const aiSource = (required: string[]) =>
  obj(
    {
      name: str(),
      provider: { type: 'string', enum: ['anthropic', 'openai'] },
      apiUrl: str('Provider base URL (e.g. https://api.anthropic.com or an OpenAI-compatible /v1 URL)'),
      apiKey: str('Omit on update to keep the stored key'),
      model: str(),
      availableModels: { type: 'array', items: obj({ id: str(), name: str() }, ['id']) },
    },
    required,
  );

export const DOCUMENTED_BODIES: Record<string, Record<string, unknown>> = {
  'POST /api/config': obj({}, [], 'A partial configuration, merged into the stored one (JSON Merge Patch)'),
  'POST /api/ai-sources/sources': aiSource(['name', 'provider', 'apiUrl', 'model']),
  'PUT /api/ai-sources/sources/{sourceId}': aiSource([]),
  'POST /api/agent/test-model-source': obj({
    modelSourceId: str('A stored source (404 when unknown)'),
    source: obj(
      {},
      [],
      'An unsaved source, as POST /api/ai-sources/sources takes it (name optional); with modelSourceId, unsaved edits of that source ("***" or no apiKey keeps the stored key)',
    ),
    modelId: str("The model to call; the source's model when omitted"),
  }),
  'POST /api/apps/{appId}/config': obj(
    {},
    [],
    "The digital human's whole configuration object (full replacement), keys per its spec's config_schema",
  ),
};

/** PUT operations whose body is a file's raw bytes (application/octet-stream), not JSON. */
export const RAW_BODY_OPERATIONS: ReadonlySet<string> = new Set([
  'PUT /api/spaces/{spaceId}/artifacts/upload',
  'PUT /api/tlon/{kbId}/upload',
]);

/** POST and PUT operations that take no body. */
export const BODYLESS_OPERATIONS: ReadonlySet<string> = new Set([
  'POST /api/browser/login-sessions/{viewId}/finish',
  'POST /api/spaces/{spaceId}/open',
  'POST /api/spaces/{spaceId}/memory/consolidate',
  'POST /api/spaces/{spaceId}/artifacts/reconcile',
  'POST /api/system/backup',
  'POST /api/apps/{appId}/reinstall',
  'POST /api/apps/{appId}/pause',
  'POST /api/apps/{appId}/resume',
  'POST /api/apps/{appId}/clear-memory',
  'POST /api/apps/{appId}/chat/stop',
  'POST /api/apps/{appId}/chat/restart',
  'POST /api/apps/{appId}/trigger',
  'POST /api/apps/{appId}/runs/{runId}/continue',
  'POST /api/store/revalidate',
  'POST /api/store/refresh',
  'POST /api/store/updates/check-now',
  'POST /api/teams/{teamId}/run',
  'POST /api/teams/{teamId}/pause',
  'POST /api/teams/{teamId}/members/{appId}/stop',
  'POST /api/tlon/{kbId}/ingest',
  'POST /api/tlon/{kbId}/clear-relearn',
  // Permissions are auto-allowed on this server: these accept and ignore any body.
  'POST /api/agent/approve',
  'POST /api/agent/reject',
  // No terminal on this host: every Terminal operation answers 403 whatever the body.
  'POST /api/terminal/list',
  'POST /api/terminal/create',
  'POST /api/terminal/input',
  'POST /api/terminal/resize',
  'POST /api/terminal/kill',
  'POST /api/terminal/replay',
]);
