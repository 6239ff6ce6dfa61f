import type { AgentTool } from '../kernel/tool.js';
import { ToolInputError, requireString } from '../kernel/tool.js';
import type { App } from '../kernel/app.js';
import type { AssistantApi } from '../ports/assistant-api.port.js';

/** The digital-human permission that turns the service API on (off by default). */
export const SERVICE_API_PERMISSION = 'svc-api-ref';
/** The tool's name. */
export const SERVICE_API_TOOL = 'ServiceApi';
/** The configuration switch of the assistant's own access: `POST /api/config {"assistant": {"serviceApi": true}}`. */
export const SERVICE_API_PREFERENCE = { branch: 'assistant', key: 'serviceApi' } as const;
/** Most characters of an answer handed to the model. */
export const SERVICE_API_MAX_CHARS = 60_000;

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Whether the assistant's preference turns its API access on (the configuration's `assistant.serviceApi`). */
export function assistantMayUseServiceApi(configuration: Record<string, unknown>): boolean {
  const branch = configuration[SERVICE_API_PREFERENCE.branch];
  return (
    typeof branch === 'object' &&
    branch !== null &&
    (branch as Record<string, unknown>)[SERVICE_API_PREFERENCE.key] === true
  );
}

/** Whether a digital human may use it: the spec asks for `svc-api-ref` or the user granted it, and did not deny it. */
export function appMayUseServiceApi(app: App): boolean {
  const asked = (app.spec.permissions ?? []).includes(SERVICE_API_PERMISSION);
  const granted = app.permissions.granted.includes(SERVICE_API_PERMISSION);
  return (asked || granted) && !app.permissions.denied.includes(SERVICE_API_PERMISSION);
}

/** The `ServiceApi` tool, or none when this process serves no assistant API. */
export async function serviceApiTools(api: AssistantApi): Promise<AgentTool[]> {
  if (!api.available()) return [];
  const operations = await api.operations();
  return [
    {
      name: SERVICE_API_TOOL,
      description: [
        "Calls this service's own HTTP API (as documented in its OpenAPI reference) and answers the JSON reply; secrets in it are masked.",
        'Only these operations are open to you:',
        ...operations.map((o) => `- ${o}`),
      ].join('\n'),
      inputSchema: {
        type: 'object',
        properties: {
          method: { type: 'string', enum: [...METHODS] },
          path: { type: 'string', description: 'The path, starting with /api/ (path parameters filled in)' },
          query: { type: 'object', additionalProperties: { type: 'string' }, description: 'Query parameters' },
          body: { type: 'object', description: 'The JSON body (POST, PUT, PATCH)' },
        },
        required: ['method', 'path'],
      },
      run: async (input, ctx) => {
        const method = requireString(input, 'method').toUpperCase();
        if (!(METHODS as readonly string[]).includes(method))
          throw new ToolInputError(`method must be one of ${METHODS.join(', ')}`);
        const path = requireString(input, 'path');
        if (!path.startsWith('/api/') || path.includes('?') || path.includes('#'))
          throw new ToolInputError('path must start with /api/ and carry no query (use query)');
        const query = input.query;
        if (query !== undefined && (typeof query !== 'object' || query === null || Array.isArray(query)))
          throw new ToolInputError('query must be an object of strings');
        const answer = await api.call(
          {
            method,
            path,
            ...(query ? { query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])) } : {}),
            ...(input.body !== undefined ? { body: input.body } : {}),
          },
          ctx.signal,
        );
        const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
        const bounded =
          text.length > SERVICE_API_MAX_CHARS ? `${text.slice(0, SERVICE_API_MAX_CHARS)}\n[… left out]` : text;
        return { output: `HTTP ${answer.status}\n${bounded}`, isError: answer.status >= 400 };
      },
    },
  ];
}
