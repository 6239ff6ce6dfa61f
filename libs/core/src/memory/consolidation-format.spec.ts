import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type ConsolidationPlan,
  consolidationRequest,
  type MemoryContent,
  parseConsolidationReply,
  planConsolidation,
  reconcileConcurrentChanges,
  renderMemory,
  sectionTarget,
  slugifyTopic,
} from './consolidation-format.js';

function parsed(reply: string) {
  const result = parseConsolidationReply(reply);
  assert.ok(result.ok, result.ok ? '' : `${result.reason}: ${result.detail}`);
  return result.value;
}
function refused(reply: string) {
  const result = parseConsolidationReply(reply);
  assert.ok(!result.ok, 'expected a refusal');
  return result.reason;
}
const memory = (text: string | null, topics: Record<string, string> = {}): MemoryContent => ({
  memory: text,
  topics: new Map(Object.entries(topics)),
});

describe('topic slugs and section paths', () => {
  it('slugifies names into lower-case hyphenated file names of any script', () => {
    assert.equal(slugifyTopic('Build Setup'), 'build-setup');
    assert.equal(slugifyTopic('  --API  keys & tokens!! '), 'api-keys-tokens');
    assert.equal(slugifyTopic('Café Déjà-vu'), 'cafe-deja-vu');
    assert.equal(slugifyTopic('项目 计划'), '项目-计划');
    assert.equal(slugifyTopic('../../etc/passwd'), 'etc-passwd');
    assert.equal(slugifyTopic('...'), '');
    assert.equal(slugifyTopic('x'.repeat(200)).length, 80);
  });

  it('accepts memory.md and topics/<name>.md only', () => {
    assert.deepEqual(sectionTarget('memory.md'), { kind: 'memory' });
    assert.deepEqual(sectionTarget('.svc/memory.md'), { kind: 'memory' });
    assert.deepEqual(sectionTarget('`Memory.md`'), { kind: 'memory' });
    assert.deepEqual(sectionTarget('topics/Build Setup.md'), { kind: 'topic', slug: 'build-setup' });
    assert.deepEqual(sectionTarget('./topics/deploy'), { kind: 'topic', slug: 'deploy' });
    assert.deepEqual(sectionTarget('.svc/memory/topics/deploy.md'), { kind: 'topic', slug: 'deploy' });
    assert.deepEqual(sectionTarget('memory/topics/deploy.md'), { kind: 'topic', slug: 'deploy' });
    for (const bad of [
      '../memory.md',
      'topics/../../x.md',
      'topics/a/b.md',
      '/etc/passwd',
      'notes.md',
      'topics/..',
      'topics/.md',
      'topics/',
      '.svc/memory/.state.json',
      'C:\\x\\memory.md',
      '',
    ]) {
      assert.equal(sectionTarget(bad), null, bad);
    }
  });
});

describe('consolidation replies', () => {
  it('reads FILE and KEEP sections, ignoring a preamble and anything after END', () => {
    const reply = [
      'Here is the reorganized memory:',
      '=== FILE: memory.md ===',
      '# now',
      '## State | shipping v2',
      '',
      '=== FILE: topics/Build Setup.md ===',
      '# Build setup',
      'npm run build',
      '=== KEEP: topics/people.md ===',
      '=== END ===',
      'Let me know if you want changes.',
    ].join('\n');
    const value = parsed(reply);
    assert.equal(value.memory, '# now\n## State | shipping v2\n');
    assert.deepEqual([...value.topics], [['build-setup', '# Build setup\nnpm run build\n']]);
    assert.deepEqual([...value.keep], ['people']);
  });

  it('unwraps code fences around the whole reply or around a section, and CRLF line ends', () => {
    const whole = '```markdown\r\n=== FILE: memory.md ===\r\n# now\r\nx\r\n=== FILE: topics/a.md ===\r\nA\r\n```\r\n';
    const value = parsed(whole);
    assert.equal(value.memory, '# now\nx\n');
    assert.equal(value.topics.get('a'), 'A\n');
    const section = parsed(
      '=== FILE: memory.md ===\n```md\n# now\ny\n```\n=== FILE: topics/b.md ===\n~~~\nB\n~~~\n=== END ===',
    );
    assert.equal(section.memory, '# now\ny\n');
    assert.equal(section.topics.get('b'), 'B\n');
    // A fence inside the content stays.
    const inner = parsed('=== FILE: memory.md ===\n# now\n```sh\nnpm test\n```\nafter\n=== END ===');
    assert.equal(inner.memory, '# now\n```sh\nnpm test\n```\nafter\n');
  });

  it('merges two sections of one topic, drops empty pages, and lets a written page win over KEEP', () => {
    const value = parsed(
      '=== FILE: memory.md ===\n# now\n=== FILE: topics/Deploy.md ===\none\n=== FILE: topics/deploy.md ===\ntwo\n=== FILE: topics/empty.md ===\n\n=== KEEP: topics/deploy.md ===\n=== END ===',
    );
    assert.deepEqual([...value.topics], [['deploy', 'one\n\ntwo\n']]);
    assert.deepEqual([...value.keep], []);
  });

  it('refuses replies without a usable memory.md', () => {
    assert.equal(refused('I could not do it.'), 'invalid-response');
    assert.equal(refused('=== FILE: topics/a.md ===\nA\n=== END ==='), 'invalid-response');
    assert.equal(refused('=== FILE: memory.md ===\n\n   \n=== END ==='), 'invalid-response');
    assert.equal(refused('=== FILE: memory.md ===\na\n=== FILE: memory.md ===\nb'), 'invalid-response');
    assert.equal(refused('=== KEEP: memory.md ===\n=== END ==='), 'invalid-response');
  });

  it('refuses any path outside memory.md and the topics folder', () => {
    assert.equal(refused('=== FILE: memory.md ===\n# now\n=== FILE: ../../.bashrc ===\nevil'), 'invalid-path');
    assert.equal(refused('=== FILE: memory.md ===\n# now\n=== FILE: topics/a/b.md ===\nx'), 'invalid-path');
    assert.equal(refused('=== FILE: memory.md ===\n# now\n=== FILE: .state.json ===\n{}'), 'invalid-path');
    assert.equal(refused('=== FILE: memory.md ===\n# now\n=== KEEP: /etc/passwd ===\n'), 'invalid-path');
  });

  it('reads a reply with lines that almost look like markers in linear time', () => {
    const started = Date.now();
    const bait = [`=== FILE: ${'===='.repeat(5_000)}x`, `=== FILE: ${' '.repeat(20_000)}x`].join('\n');
    const value = parsed(`=== FILE: memory.md ===\n# now\n${bait}\n`);
    assert.ok(Date.now() - started < 500, `took ${Date.now() - started} ms`);
    assert.equal(value.memory.includes('x'), true);
  });

  it('refuses a runaway number of topic pages', () => {
    const sections = Array.from({ length: 201 }, (_, i) => `=== FILE: topics/t${i}.md ===\nx`).join('\n');
    assert.equal(refused(`=== FILE: memory.md ===\n# now\n${sections}`), 'too-many-topics');
  });

  it('shows the current memory to the model in the reply format, which reads back unchanged', () => {
    const content = memory('# now\nstate\n', { zeta: 'Z\n', alpha: 'A\n' });
    const rendered = renderMemory(content);
    assert.equal(
      rendered,
      '=== FILE: memory.md ===\n# now\nstate\n=== FILE: topics/alpha.md ===\nA\n=== FILE: topics/zeta.md ===\nZ\n=== END ===',
    );
    const back = parsed(rendered);
    assert.equal(back.memory, content.memory);
    assert.deepEqual([...back.topics].sort(), [...content.topics].sort());
    const request = consolidationRequest(content, new Date(Date.UTC(2025, 2, 4)));
    assert.match(request, /Current date: 2025-03-04/);
    assert.match(request, /2 topic page\(s\)/);
    assert.ok(request.includes(rendered));
  });
});

describe('consolidation plans', () => {
  const current = memory(`# now\n${'x'.repeat(500)}\n`, {
    'Old Notes': 'n'.repeat(200),
    people: 'p'.repeat(300),
    deploy: 'd'.repeat(100),
  });

  it('writes the new pages, keeps the kept ones (matched by slug), removes the rest', () => {
    const reply = parsed(
      `=== FILE: memory.md ===\n# now\nshort\n=== FILE: topics/deploy.md ===\n${'d'.repeat(150)}\n=== FILE: topics/history.md ===\n${'h'.repeat(400)}\n=== KEEP: topics/old-notes.md ===\n=== KEEP: topics/missing.md ===`,
    );
    const result = planConsolidation(current, reply);
    assert.ok(result.ok);
    const plan = result.value;
    assert.deepEqual([...plan.write.keys()], ['deploy', 'history']);
    assert.deepEqual([...plan.keep], ['Old Notes']);
    assert.deepEqual([...plan.remove], ['people']);
    assert.equal(plan.oldBytes, 507 + 200 + 300 + 100);
    assert.equal(plan.newBytes, Buffer.byteLength('# now\nshort\n') + 151 + 401 + 200);
  });

  it('refuses a result that lost more than 60% of the content', () => {
    const tooSmall = parsed(
      '=== FILE: memory.md ===\n# now\nalmost nothing\n=== FILE: topics/a.md ===\n' + 'a'.repeat(400),
    );
    const result = planConsolidation(current, tooSmall);
    assert.ok(!result.ok);
    assert.equal(result.reason, 'shrunk');
    const justEnough = parsed(
      '=== FILE: memory.md ===\n# now\n=== FILE: topics/a.md ===\n' + 'a'.repeat(Math.ceil(1107 * 0.4)),
    );
    assert.ok(planConsolidation(current, justEnough).ok);
  });

  it('accepts anything for memory that was empty', () => {
    assert.ok(planConsolidation(memory(null), parsed('=== FILE: memory.md ===\n# now\n')).ok);
  });
});

describe('changes made while the model worked', () => {
  const sent = memory('# now\nA\n', { t: 'T\n' });
  const plan = (): ConsolidationPlan => ({
    memory: '# now\nB\n',
    write: new Map([['t', 'T2\n']]),
    keep: new Set(),
    remove: new Set(),
    oldBytes: 12,
    newBytes: 12,
  });

  it('keeps the plan when nothing changed', () => {
    const result = reconcileConcurrentChanges(sent, memory('# now\nA\n', { t: 'T\n' }), plan());
    assert.ok(result.ok);
    assert.equal(result.value.memory, '# now\nB\n');
  });

  it('carries text appended to memory.md over to the end of the new one', () => {
    const result = reconcileConcurrentChanges(
      sent,
      memory('# now\nA\n\n## 2025-01-01-1200 | new note\n', { t: 'T\n' }),
      plan(),
    );
    assert.ok(result.ok);
    assert.equal(result.value.memory, '# now\nB\n\n## 2025-01-01-1200 | new note\n');
    assert.equal(result.value.newBytes, 12 - 8 + Buffer.byteLength(result.value.memory));
  });

  it('refuses the result when memory.md was edited, or a topic page changed', () => {
    const edited = reconcileConcurrentChanges(sent, memory('# now\nchanged\n', { t: 'T\n' }), plan());
    assert.ok(!edited.ok);
    assert.equal(edited.reason, 'changed');
    const topic = reconcileConcurrentChanges(sent, memory('# now\nA\n', { t: 'T!\n' }), plan());
    assert.ok(!topic.ok);
    const added = reconcileConcurrentChanges(sent, memory('# now\nA\n', { t: 'T\n', u: 'U\n' }), plan());
    assert.ok(!added.ok);
  });
});
