import { type AgentTool, ToolInputError } from '../../kernel/tool.js';

const STATUSES = ['pending', 'in_progress', 'completed'];

/** The model's own task list for the turn; shown to clients through the tool events. */
export function todoWriteTool(): AgentTool {
  return {
    name: 'TodoWrite',
    description:
      'Keep a short task list for the current work: the whole list each time, with status pending, in_progress or completed.',
    inputSchema: {
      type: 'object',
      properties: {
        todos: {
          type: 'array',
          items: {
            type: 'object',
            properties: { content: { type: 'string' }, status: { type: 'string', enum: STATUSES } },
            required: ['content', 'status'],
          },
        },
      },
      required: ['todos'],
    },
    async run(input) {
      const todos = input.todos;
      if (!Array.isArray(todos)) throw new ToolInputError('todos must be an array');
      for (const todo of todos) {
        const t = todo as { content?: unknown; status?: unknown };
        if (typeof t?.content !== 'string' || !STATUSES.includes(t.status as string)) {
          throw new ToolInputError('each todo needs content (string) and status (pending, in_progress or completed)');
        }
      }
      const lines = (todos as Array<{ content: string; status: string }>).map(
        (t) => `${t.status === 'completed' ? '[x]' : t.status === 'in_progress' ? '[~]' : '[ ]'} ${t.content}`,
      );
      return { output: `Todos updated:\n${lines.join('\n')}`, isError: false };
    },
  };
}
