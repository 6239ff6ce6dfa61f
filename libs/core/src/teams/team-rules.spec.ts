import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BoardTaskDto, TeamMemberDto } from '#contracts/teams.js';
import {
  boardSettled,
  DEFAULT_TEAM_LIMITS,
  findMember,
  limitBreach,
  timeLimitText,
  mayMessage,
  outcomeOf,
  parseProposal,
  renderMail,
  subjectOf,
} from './team-rules.js';

const task = (status: BoardTaskDto['status']) => ({ status }) as BoardTaskDto;
const member = (appId: string, memberName: string) => ({ appId, memberName }) as TeamMemberDto;

describe('team rules', () => {
  it('a board is settled when every task is done or rejected', () => {
    assert.equal(boardSettled([]), true);
    assert.equal(boardSettled([task('done'), task('rejected')]), true);
    assert.equal(boardSettled([task('done'), task('in_progress')]), false);
    assert.equal(boardSettled([task('blocked')]), false);
  });

  it('outcome: done work or a finding is output, else no action', () => {
    assert.equal(outcomeOf([task('done')], []), 'output');
    assert.equal(outcomeOf([task('rejected')], [{} as never]), 'output');
    assert.equal(outcomeOf([task('rejected')], []), 'no_action');
  });

  it('structured mode messages along an edge in either direction; free mode anyone', () => {
    const edges = [{ fromAppId: 'a', toAppId: 'b' }];
    assert.equal(mayMessage('structured', edges, 'a', 'b'), true);
    assert.equal(mayMessage('structured', edges, 'b', 'a'), true);
    assert.equal(mayMessage('structured', edges, 'a', 'c'), false);
    assert.equal(mayMessage('free', [], 'a', 'c'), true);
  });

  it('finds members by name (any case) or app id', () => {
    const members = [member('id-1', 'Researcher'), member('id-2', 'Writer')];
    assert.equal(findMember(members, ' researcher ')?.appId, 'id-1');
    assert.equal(findMember(members, 'id-2')?.memberName, 'Writer');
    assert.equal(findMember(members, 'nobody'), undefined);
  });

  it('names the limit a message breaks', () => {
    const ok = { count: 1, depth: 1, elapsedMs: 0 };
    assert.equal(limitBreach(DEFAULT_TEAM_LIMITS, ok), null);
    assert.match(limitBreach(DEFAULT_TEAM_LIMITS, { ...ok, count: 201 })!, /200 member messages/);
    assert.match(limitBreach(DEFAULT_TEAM_LIMITS, { ...ok, depth: 9 })!, /8 hops/);
    assert.match(limitBreach(DEFAULT_TEAM_LIMITS, { ...ok, elapsedMs: 3 * 3_600_000 })!, /more than 2 hour\(s\)/);
    const short = { ...DEFAULT_TEAM_LIMITS, maxDurationMs: 3000 };
    assert.match(limitBreach(short, { ...ok, elapsedMs: 3001 })!, /more than 3 second\(s\) \(the time limit per run\)/);
    assert.match(timeLimitText({ ...short, maxDurationMs: 90 * 60_000 }), /more than 90 minute\(s\)/);
  });

  it('subjects are one line of at most 80 characters; mail names its sender', () => {
    assert.equal(subjectOf('a\n  b'), 'a b');
    assert.equal(subjectOf('x'.repeat(100)).length, 80);
    assert.equal(
      renderMail(
        [
          { fromAppId: null, body: 'Go' },
          { fromAppId: 'id-1', body: 'Done' },
        ],
        () => 'Researcher',
      ),
      '[From your user]\nGo\n\n[Message from Researcher]\nDone',
    );
  });
});

describe('proposed members', () => {
  it('reads the JSON array of a reply, bare or fenced; drops bad items and repeated names; at most 5', () => {
    const item = (n: string) => ({ memberName: n, role: 'r', responsibility: 'x' });
    assert.deepEqual(
      parseProposal('```json\n[{"memberName":" Ana ","role":"research","responsibility":"Finds."}]\n```'),
      [{ memberName: 'Ana', role: 'research', responsibility: 'Finds.' }],
    );
    assert.deepEqual(
      parseProposal(JSON.stringify([item('A'), { memberName: 3 }, item('a'), item('B')])).map((m) => m.memberName),
      ['A', 'B'],
    );
    assert.equal(parseProposal(JSON.stringify(['1', '2', '3', '4', '5', '6', '7'].map(item))).length, 5);
    assert.deepEqual(parseProposal('no idea'), []);
    assert.deepEqual(parseProposal('[not json]'), []);
  });
});
