import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '../errors/domain-error.js';
import {
  approvalMatcher,
  effectivePolicy,
  isActivePolicy,
  parseApprovalPolicy,
  rejectionText,
} from './approval-policy.js';

function refusal(value: unknown): string {
  try {
    parseApprovalPolicy(value);
  } catch (err) {
    assert.ok(err instanceof DomainError);
    assert.equal(err.kind, 'invalid');
    return err.message;
  }
  assert.fail('expected a refusal');
}

describe('approval policy', () => {
  it('reads tools and a timeout, defaulting the timeout to 600 seconds', () => {
    assert.deepEqual(parseApprovalPolicy({ tools: ['Bash'] }), { tools: ['Bash'], timeoutSeconds: 600 });
    assert.deepEqual(parseApprovalPolicy({ tools: ['Write'], timeoutSeconds: 5 }), {
      tools: ['Write'],
      timeoutSeconds: 5,
    });
    assert.equal(parseApprovalPolicy(null), null);
    assert.equal(parseApprovalPolicy(undefined), null);
  });

  it('refuses bad input naming the field', () => {
    assert.match(refusal('Bash'), /^approvals must be an object/);
    assert.match(refusal({}), /^approvals\.tools must be a list/);
    assert.match(refusal({ tools: ['Bash', 3] }), /^approvals\.tools\[1\] /);
    assert.match(refusal({ tools: ['a'.repeat(1001)] }), /^approvals\.tools\[0\] is not a usable pattern/);
    assert.match(refusal({ tools: [], timeoutSeconds: 0 }), /^approvals\.timeoutSeconds /);
    assert.match(refusal({ tools: [], timeoutSeconds: 1.5 }), /^approvals\.timeoutSeconds /);
    assert.match(refusal({ tools: [], timeout: 3 }), /^approvals\.timeout is not an approvals setting/);
  });

  it('an empty tools list is no policy', () => {
    assert.equal(isActivePolicy(parseApprovalPolicy({ tools: [] })), false);
    assert.equal(isActivePolicy(null), false);
    assert.equal(isActivePolicy(parseApprovalPolicy({ tools: ['Bash'] })), true);
  });

  it('matches tool names by glob, with ! patterns excluding', () => {
    const holds = approvalMatcher({ tools: ['Bash', 'mcp__*__send*', '!mcp__*__sendTest'], timeoutSeconds: 1 });
    assert.equal(holds('Bash'), true);
    assert.equal(holds('Read'), false);
    assert.equal(holds('mcp__mail__sendMessage'), true);
    assert.equal(holds('mcp__mail__sendTest'), false);
    assert.equal(holds('mcp__mail__list'), false);
  });

  it("a digital human's own policy wins, even an empty one", () => {
    const configured = { tools: ['Bash'] };
    assert.deepEqual(effectivePolicy(undefined, configured)?.tools, ['Bash']);
    assert.deepEqual(effectivePolicy({ tools: ['Write'] }, configured)?.tools, ['Write']);
    assert.equal(isActivePolicy(effectivePolicy({ tools: [] }, configured)), false);
  });

  it('words the refusal the model gets', () => {
    assert.equal(rejectionText('too risky'), 'The user rejected this tool call: too risky');
  });
});
