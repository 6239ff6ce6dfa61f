/**
 * Operations whose body is not JSON or absent. Every JSON body is a class-validator DTO, whose
 * schema the document generates (an open one: `OpenBody` in common/validation.ts). Keys are
 * `METHOD /openapi/{path}`.
 */

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
  'POST /api/tlon/{kbId}/linked-dirs/{linkId}/retry',
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
