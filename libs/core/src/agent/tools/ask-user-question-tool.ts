import type { AskQuestion } from '#contracts/agent.js';
import type { AgentTool } from '../../kernel/tool.js';

export const ASK_USER_QUESTION = 'AskUserQuestion';

/**
 * AskUserQuestion (docs/api.md, "The assistant's tools"): the turn waits for the answers through the `askUser`
 * capability of its tool context, so the loop treats it like any other tool.
 */
export function askUserQuestionTool(): AgentTool {
  return {
    name: ASK_USER_QUESTION,
    description:
      'Ask the user one or more multiple-choice questions and wait for the answers. Use it when a decision is needed that only the user can make.',
    inputSchema: ASK_USER_QUESTION_SCHEMA,
    async run(input, ctx) {
      const questions = parseQuestions(input.questions);
      if (!questions) {
        return {
          output: 'questions must be an array of {question, header, options:[{label, description}], multiSelect}',
          isError: true,
        };
      }
      if (!ctx.askUser) return { output: 'Nobody can answer questions in this turn.', isError: true };
      const answers = await ctx.askUser(questions);
      return { output: `The user answered: ${JSON.stringify(answers)}`, isError: false };
    },
  };
}

function parseQuestions(value: unknown): AskQuestion[] | null {
  if (!Array.isArray(value) || value.length === 0) return null;
  const out: AskQuestion[] = [];
  for (const q of value) {
    const item = q as Partial<AskQuestion>;
    if (typeof item?.question !== 'string') return null;
    out.push({
      question: item.question,
      header: typeof item.header === 'string' ? item.header : '',
      options: Array.isArray(item.options)
        ? item.options.map((o) => ({ label: String(o?.label ?? ''), description: String(o?.description ?? '') }))
        : [],
      multiSelect: item.multiSelect === true,
    });
  }
  return out;
}

export const ASK_USER_QUESTION_SCHEMA = {
  type: 'object',
  properties: {
    questions: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          question: { type: 'string' },
          header: { type: 'string' },
          options: {
            type: 'array',
            items: {
              type: 'object',
              properties: { label: { type: 'string' }, description: { type: 'string' } },
              required: ['label', 'description'],
            },
          },
          multiSelect: { type: 'boolean' },
        },
        required: ['question', 'header', 'options', 'multiSelect'],
      },
    },
  },
  required: ['questions'],
};
