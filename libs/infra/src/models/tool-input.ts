/** The streamed arguments of one tool call, parsed once the call is complete. */
export interface ParsedToolInput {
  input: Record<string, unknown>;
  rawInput?: string;
  inputError?: string;
}

const RAW_PREVIEW = 2000;

/**
 * Parses a tool call's accumulated JSON text. Empty text is `{}` (a tool without
 * parameters). Anything that is not a JSON object gives `{}` plus the raw text and a
 * message the turn loop can hand back to the model as the tool's error.
 */
export function parseToolInput(text: string): ParsedToolInput {
  if (text.trim() === '') return { input: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return {
      input: {},
      rawInput: text,
      inputError: `The tool input is not valid JSON (${(err as Error).message}); received: ${preview(text)}`,
    };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return {
      input: {},
      rawInput: text,
      inputError: `The tool input must be a JSON object; received: ${preview(text)}`,
    };
  }
  return { input: value as Record<string, unknown> };
}

function preview(text: string): string {
  return text.length > RAW_PREVIEW ? `${text.slice(0, RAW_PREVIEW)}… (${text.length} characters)` : text;
}
