import type { RecordedModelRequest, ScriptedModelServer } from './scripted-model-server.js';

/** A run as a scripted model saw it: the first request of each run ends with its trigger message. */
export interface StartedRun {
  /** The `[[tag]]` of the app's system prompt (tests mark each app so). */
  tag: string | null;
  /** Trigger type: schedule, webhook, file, manual, … */
  type: string;
  /** When the server started the run (its clock, from the trigger message). */
  startedAtMs: number;
  /** The trigger's data (for a schedule: `subscriptionId`, `scheduledAt`). */
  data: Record<string, unknown>;
}

const TRIGGER = /^Run started by a (\S+) trigger at (\S+)\.\nTrigger data: (.*)$/m;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b: { type?: string; text?: string }) => (b.type === 'text' && typeof b.text === 'string' ? b.text : ''))
    .join('\n');
}

function systemOf(req: RecordedModelRequest): string {
  const system = req.body.system;
  if (typeof system === 'string') return system;
  return Array.isArray(system) ? system.map((b) => b.text).join('\n') : '';
}

/** Every run start among the requests, in arrival order. */
export function startedRuns(requests: readonly RecordedModelRequest[]): StartedRun[] {
  const runs: StartedRun[] = [];
  for (const req of requests) {
    const last = req.body.messages?.at(-1);
    if (!last || last.role !== 'user') continue;
    const match = TRIGGER.exec(textOf(last.content));
    if (!match) continue;
    let data: Record<string, unknown> = {};
    try {
      data = JSON.parse(match[3]!) as Record<string, unknown>;
    } catch {
      /* not JSON: leave empty */
    }
    runs.push({
      tag: /\[\[(.+?)\]\]/.exec(systemOf(req))?.[1] ?? null,
      type: match[1]!,
      startedAtMs: Date.parse(match[2]!),
      data,
    });
  }
  return runs;
}

/**
 * Makes every run end at once: report_to_user complete, then a short text. The runs of apps
 * tagged with one of `failTags` fail instead: their model calls answer HTTP 400; those of a
 * tag in `slowTags` take that many ms before they report.
 */
export function completeEveryRun(
  model: ScriptedModelServer,
  failTags: ReadonlySet<string> = new Set(),
  slowTags: ReadonlyMap<string, number> = new Map(),
): void {
  model.respond((req) => {
    const tag = /\[\[(.+?)\]\]/.exec(systemOf(req))?.[1];
    if (tag !== undefined && failTags.has(tag)) return { status: 400, error: `scripted failure of ${tag}` };
    const last = req.body.messages?.at(-1);
    const answered =
      Array.isArray(last?.content) && last.content.some((b: { type?: string }) => b.type === 'tool_result');
    if (answered) return undefined;
    const report = { toolCall: { name: 'report_to_user', input: { type: 'complete', summary: 'Done.' } } };
    const slow = tag === undefined ? undefined : slowTags.get(tag);
    return { steps: slow === undefined ? [report] : [{ delayMs: slow }, report] };
  });
}
