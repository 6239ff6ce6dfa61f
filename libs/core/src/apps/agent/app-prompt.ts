import type { ModelPin } from '../../models/model-source-rules.js';
import type { ReasoningEffort } from '../../ports/model-provider.port.js';
import type { App } from '../../kernel/app.js';
import { appDataPath } from '../app-data.js';

/**
 * The system prompt of a digital human's turn: who it is (its spec's `system_prompt`), its
 * settings, its memory and where its data lives, then what this kind of turn expects.
 */
export function appSystemPrompt(input: {
  app: App;
  workspacePath: string;
  now: Date;
  memory: string | null;
  toolNames: string[];
  /** What this kind of turn asks on top (a run's reporting rule, …). */
  closing: string[];
}): string {
  const { app } = input;
  const name = app.spec.display_name ?? app.spec.name;
  const lines = [
    `You are "${name}", a digital human: ${app.spec.description}`,
    '',
    app.spec.system_prompt?.trim() || 'Help the user with what they ask.',
    '',
    `Workspace folder: ${input.workspacePath}`,
    `Your data folder: ${appDataPath(app.id)} (inside the workspace folder); keep your notes and memory there.`,
    `Current date: ${input.now.toISOString().slice(0, 10)}`,
    `Tools: ${input.toolNames.join(', ')}. File paths are absolute inside the workspace folder or relative to it; nothing outside it can be touched.`,
  ];
  const settings = Object.entries(app.userConfig);
  if (settings.length > 0) {
    lines.push('', 'Your settings:', ...settings.map(([key, value]) => `- ${key}: ${JSON.stringify(value)}`));
  }
  if (input.memory && input.memory.trim() !== '') {
    lines.push('', `Your memory (${appDataPath(app.id)}/memory.md):`, input.memory.trim());
  }
  if (input.closing.length > 0) lines.push('', ...input.closing);
  return lines.join('\n');
}

/** Whether the app may run shell commands: the spec asks for it and the user did not deny it. */
export function appMayUseShell(app: App): boolean {
  const asked = (app.spec.permissions ?? []).some((p) => p === 'bash' || p === 'shell' || p === 'shell.execute');
  const granted = app.permissions.granted.some((p) => p === 'bash' || p === 'shell' || p === 'shell.execute');
  const denied = app.permissions.denied.some((p) => p === 'bash' || p === 'shell' || p === 'shell.execute');
  return (asked || granted) && !denied;
}

/**
 * The model the user chose for this digital human (`userOverrides.modelSourceId`, with
 * `modelId` or else that source's default model); null: the current source. The spec's
 * `recommended_model` is a hint only and never switches the model.
 */
export function appModelPin(app: App): ModelPin | null {
  const { modelSourceId, modelId } = app.userOverrides;
  if (typeof modelSourceId !== 'string' || modelSourceId === '') return null;
  return { modelSourceId, modelId: typeof modelId === 'string' && modelId !== '' ? modelId : null };
}

/** The reasoning effort the user chose for chats with this digital human, if any. */
export function appChatEffort(app: App): ReasoningEffort | null {
  const effort = app.userOverrides.chatReasoningEffort;
  return effort === 'low' || effort === 'medium' || effort === 'high' ? effort : null;
}
