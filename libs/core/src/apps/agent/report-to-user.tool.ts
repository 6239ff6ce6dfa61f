import { ToolInputError, type AgentTool, type ToolOutcome } from '../../kernel/tool.js';

export const REPORT_TO_USER = 'report_to_user';
export const REPORT_TYPES = ['complete', 'milestone', 'output', 'escalation'] as const;
export type ReportType = (typeof REPORT_TYPES)[number];

/** One `report_to_user` call (docs/api/digital-humans.md, "Runs"). */
export interface RunReport {
  type: ReportType;
  summary: string;
  choices?: string[];
  data?: unknown;
}

/** Which reports end a run: all but a milestone. */
export const isFinalReport = (report: RunReport): boolean => report.type !== 'milestone';

/** Checks the model's arguments; a bad call is an error the model reads and can correct. */
export function parseReport(input: Record<string, unknown>): RunReport {
  const type = input.type;
  if (typeof type !== 'string' || !(REPORT_TYPES as readonly string[]).includes(type)) {
    throw new ToolInputError(`type must be one of ${REPORT_TYPES.join(', ')}`);
  }
  if (typeof input.summary !== 'string' || input.summary.trim() === '') {
    throw new ToolInputError('summary is required and must be a string');
  }
  const report: RunReport = { type: type as ReportType, summary: input.summary };
  if (input.choices !== undefined && input.choices !== null) {
    if (!Array.isArray(input.choices) || !input.choices.every((c) => typeof c === 'string')) {
      throw new ToolInputError('choices must be an array of strings');
    }
    report.choices = input.choices as string[];
  }
  if (input.data !== undefined) report.data = input.data;
  return report;
}

/** The tool a run reports through; `record` stores the report (activity, events, state). */
export function reportToUserTool(record: (report: RunReport) => Promise<string>): AgentTool {
  return {
    name: REPORT_TO_USER,
    description:
      'Report to your user. Call it once with type "complete" (or "output" with the result) when the task is done, ' +
      '"milestone" for progress along the way, or "escalation" with a question (and optional choices) when you need the user to decide. ' +
      'Every run must end with this tool.',
    inputSchema: {
      type: 'object',
      properties: {
        type: { type: 'string', enum: [...REPORT_TYPES] },
        summary: { type: 'string', description: 'What to tell the user (the question, for an escalation).' },
        choices: { type: 'array', items: { type: 'string' }, description: 'Answers the user can pick (escalation).' },
        data: { description: 'Structured result to keep with the report.' },
      },
      required: ['type', 'summary'],
    },
    async run(input): Promise<ToolOutcome> {
      const report = parseReport(input);
      return { output: await record(report), isError: false };
    },
  };
}
