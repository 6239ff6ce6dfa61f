import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ToolInputError } from '../../kernel/tool.js';
import { isFinalReport, parseReport, reportToUserTool, type RunReport } from './report-to-user.tool.js';

describe('report_to_user', () => {
  it('accepts the four types with summary, choices and data', () => {
    assert.deepEqual(parseReport({ type: 'complete', summary: 'Done' }), { type: 'complete', summary: 'Done' });
    assert.deepEqual(parseReport({ type: 'escalation', summary: 'Buy?', choices: ['yes', 'no'], data: { p: 1 } }), {
      type: 'escalation',
      summary: 'Buy?',
      choices: ['yes', 'no'],
      data: { p: 1 },
    });
    assert.equal(parseReport({ type: 'milestone', summary: 'x', choices: null }).choices, undefined);
  });

  it('refuses a bad call with a message naming the field, for the model to correct', () => {
    for (const [input, field] of [
      [{ summary: 'x' }, /type/],
      [{ type: 'done', summary: 'x' }, /type/],
      [{ type: 'output' }, /summary/],
      [{ type: 'output', summary: '  ' }, /summary/],
      [{ type: 'escalation', summary: 'q', choices: 'yes' }, /choices/],
      [{ type: 'escalation', summary: 'q', choices: [1] }, /choices/],
    ] as const) {
      assert.throws(
        () => parseReport(input as Record<string, unknown>),
        (err: Error) => {
          assert.ok(err instanceof ToolInputError);
          assert.match(err.message, field);
          return true;
        },
      );
    }
  });

  it('a milestone does not end the run; the others do', () => {
    const of = (type: RunReport['type']) => isFinalReport({ type, summary: 's' });
    assert.deepEqual([of('milestone'), of('complete'), of('output'), of('escalation')], [false, true, true, true]);
  });

  it('hands a valid report to the recorder and answers its text', async () => {
    const seen: RunReport[] = [];
    const tool = reportToUserTool(async (r) => {
      seen.push(r);
      return 'noted';
    });
    assert.equal(tool.name, 'report_to_user');
    const outcome = await tool.run({ type: 'output', summary: 'Result' }, {} as never);
    assert.deepEqual(outcome, { output: 'noted', isError: false });
    assert.deepEqual(seen, [{ type: 'output', summary: 'Result' }]);
  });
});
