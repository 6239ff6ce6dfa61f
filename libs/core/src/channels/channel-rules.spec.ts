import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  approvalChoices,
  approvalPromptText,
  decisionLine,
  escalationAnswer,
  escalationText,
  inScope,
  maskConfig,
  mergeConfig,
  missingConfigField,
  parseApprovalChoice,
  parseApprovalReply,
  parseCommand,
  senderRole,
  splitReply,
  stripMentions,
} from './channel-rules.js';

const FIELDS = [
  { key: 'secret', label: 'Secret', type: 'secret' as const, required: true },
  { key: 'callbackUrl', label: 'URL', type: 'url' as const, required: true },
];

describe('channel rules', () => {
  it('masks secret fields that hold a value, and a "***" in a change keeps the stored one', () => {
    assert.deepEqual(maskConfig({ secret: 's', callbackUrl: 'http://x' }, FIELDS), {
      secret: '***',
      callbackUrl: 'http://x',
    });
    assert.deepEqual(maskConfig({ secret: '' }, FIELDS), { secret: '' });
    assert.deepEqual(mergeConfig({ secret: 's', a: 1 }, { secret: '***', a: null, b: 2 }), { secret: 's', b: 2 });
    assert.equal(missingConfigField({ secret: 's' }, FIELDS), 'callbackUrl');
    assert.equal(missingConfigField({ secret: 's', callbackUrl: 'u' }, FIELDS), null);
  });

  it('strips leading mentions in their platforms forms', () => {
    assert.equal(stripMentions('@bot hello'), 'hello');
    assert.equal(stripMentions('@bot, @other: hi there'), 'hi there');
    assert.equal(stripMentions('<@U123ABC> what now'), 'what now');
    assert.equal(stripMentions('mail me at a@b.c'), 'mail me at a@b.c');
  });

  it('reads /stop and /clear (with a bot name, any case), nothing else', () => {
    assert.equal(parseCommand('/stop'), 'stop');
    assert.equal(parseCommand(' /STOP@my_bot '), 'stop');
    assert.equal(parseCommand('/clear'), 'clear');
    assert.equal(parseCommand('/reset'), 'clear');
    assert.equal(parseCommand('/stop now please'), null);
    assert.equal(parseCommand('please /stop'), null);
  });

  it('owner, first direct sender, guest or denied', () => {
    assert.equal(senderRole({ owners: ['a'], guestPolicy: 'deny' }, 'a', 'group'), 'owner');
    assert.equal(senderRole({ owners: [], guestPolicy: 'deny' }, 'b', 'direct'), 'claims-ownership');
    assert.equal(senderRole({ owners: [], guestPolicy: 'deny' }, 'b', 'group'), 'denied');
    assert.equal(senderRole({ owners: ['a'], guestPolicy: 'chat-only' }, 'b', 'direct'), 'guest');
    assert.ok(inScope('all', 'group') && inScope('direct', 'direct') && !inScope('group', 'direct'));
  });

  it('splits a reply to the limit in order, at paragraph, line or word breaks, else hard', () => {
    assert.deepEqual(splitReply('short', 10), ['short']);
    const paragraphs = 'aaaa aaaa\n\nbbbb bbbb\n\ncccc';
    assert.deepEqual(splitReply(paragraphs, 12), ['aaaa aaaa', 'bbbb bbbb', 'cccc']);
    assert.deepEqual(splitReply('x'.repeat(25), 10), ['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5)]);
    const words = Array.from({ length: 200 }, (_, i) => `w${i}`).join(' ');
    const parts = splitReply(words, 50);
    assert.ok(parts.every((p) => p.length <= 50));
    assert.equal(parts.join(' '), words);
    // A surrogate pair is never cut in two.
    const emoji = '😀'.repeat(10);
    const cut = splitReply(emoji, 5);
    assert.equal(cut.join(''), emoji);
    assert.ok(cut.every((p) => !/[\ud800-\udbff]$/.test(p)));
  });

  it('reads a reply to an escalation as a choice by number or words, else as free text', () => {
    const choices = ['Buy it', 'Wait'];
    assert.deepEqual(escalationAnswer(' 2 ', choices), { choice: 'Wait' });
    assert.deepEqual(escalationAnswer('buy IT', choices), { choice: 'Buy it' });
    assert.deepEqual(escalationAnswer('3', choices), { text: '3' });
    assert.deepEqual(escalationAnswer('only below 40', choices), { text: 'only below 40' });
    assert.deepEqual(escalationAnswer('1', []), { text: '1' });
    assert.match(escalationText('Buy?', choices), /Buy\?\n\n1\. Buy it\n2\. Wait\n/);
    assert.doesNotMatch(escalationText('Buy?', []), /1\./);
  });
});

describe('tool approvals in a thread', () => {
  it('reads the reply words: approve, reject with or without a reason; anything else is a message', () => {
    assert.deepEqual(parseApprovalReply('approve'), { approved: true });
    assert.deepEqual(parseApprovalReply(' Approve. '), { approved: true });
    assert.deepEqual(parseApprovalReply('/approve@chatty_bot'), { approved: true });
    assert.deepEqual(parseApprovalReply('reject'), { approved: false });
    assert.deepEqual(parseApprovalReply('REJECT: too risky\ntoday'), { approved: false, reason: 'too risky\ntoday' });
    assert.equal(parseApprovalReply('approve the budget please'), null);
    assert.equal(parseApprovalReply('I approve'), null);
    assert.equal(parseApprovalReply('rejected'), null);
  });

  it('button ids name the call by its key, fit Telegram (64 bytes) and read back; others are not approvals', () => {
    const [yes, no] = approvalChoices('0123456789abcdef');
    assert.deepEqual([yes!.label, no!.label], ['Approve', 'Reject']);
    assert.ok(Buffer.byteLength(yes!.id) <= 64 && Buffer.byteLength(no!.id) <= 64);
    assert.deepEqual(parseApprovalChoice(yes!.id), { approved: true, key: '0123456789abcdef' });
    assert.deepEqual(parseApprovalChoice(no!.id), { approved: false, key: '0123456789abcdef' });
    assert.equal(parseApprovalChoice('approval:approve:xyz'), null);
    assert.equal(parseApprovalChoice('something-else'), null);
  });

  it('the message names the tool and its input, the deadline, and the words only without buttons', () => {
    const base = {
      appName: 'Operator',
      toolName: 'Bash',
      input: { command: 'rm -rf build' },
      deadline: '2026-11-28T12:40:05.123Z',
    };
    const buttons = approvalPromptText({ ...base, words: false });
    assert.equal(
      buttons,
      'Operator wants to run the tool Bash with:\n{\n  "command": "rm -rf build"\n}\nIt waits for your answer until 2026-11-28 12:40 UTC.',
    );
    assert.match(approvalPromptText({ ...base, words: true }), /Reply "approve" to run it, or "reject"/);
    const long = approvalPromptText({ ...base, input: { content: 'x'.repeat(5000) }, words: false });
    assert.ok(long.length < 1700 && long.includes('…'));
    assert.equal(decisionLine(false, 'Bash', 'Alice', 'not now'), 'Rejected by Alice: Bash does not run (not now).');
    assert.equal(decisionLine(true, 'Bash', 'Alice'), 'Approved by Alice: Bash runs now.');
  });
});
