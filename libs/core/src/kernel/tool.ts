import type { AskQuestion } from '#contracts/agent.js';
import type { Space } from './space.js';

export interface ToolContext {
  space: Space;
  signal: AbortSignal;
  /** The model's id of this call. */
  toolUseId: string;
  /**
   * Asks the user and waits for the answers (from any replica); absent when the turn has
   * nobody to ask. Throws when the turn is stopped meanwhile.
   */
  askUser?: (questions: AskQuestion[]) => Promise<Record<string, unknown>>;
}

export interface ToolOutcome {
  output: string;
  isError: boolean;
  /** Images that go with the text (a browser screenshot): base64 data. Absent for text-only tools. */
  images?: Array<{ mediaType: string; data: string }>;
}

/** A built-in tool the model can call. Inputs follow the well-known shapes (docs/api.md, "The assistant's tools"). */
export interface AgentTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  run(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome>;
}

/** A failure the model should read and react to (not a server error). */
export class ToolInputError extends Error {}

export function requireString(input: Record<string, unknown>, field: string): string {
  const value = input[field];
  if (typeof value !== 'string' || value === '') throw new ToolInputError(`${field} is required and must be a string`);
  return value;
}

export function optionalNumber(input: Record<string, unknown>, field: string): number | undefined {
  const value = input[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw new ToolInputError(`${field} must be a non-negative number`);
  return Math.floor(value);
}
