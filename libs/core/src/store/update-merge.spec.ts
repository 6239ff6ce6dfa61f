import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareVersions, mergeAuthorUpdate, updateSeverity } from './update-merge.js';

const sub = (id: string, every: string) => ({ id, source: { type: 'schedule', config: { every } } });
const v1 = {
  name: 'Watcher',
  version: '1.0.0',
  type: 'automation',
  description: 'old',
  system_prompt: 'old prompt',
  icon: '👀',
  subscriptions: [sub('a', '1h'), sub('b', '2h')],
};

describe('update merge rules', () => {
  it('compares versions numerically and tells the severity', () => {
    assert.ok(compareVersions('1.10.0', '1.9.9') > 0);
    assert.equal(compareVersions('1.0', '1.0.0'), 0);
    assert.ok(compareVersions('v2', '1.99') > 0);
    assert.equal(updateSeverity('1.0.0', '2.0.0'), 'major');
    assert.equal(updateSeverity('1.0.0', '1.1.0'), 'minor');
    assert.equal(updateSeverity('1.0', '1.0.1'), 'patch');
  });

  it('untouched fields take the author value; edited ones are kept and listed', () => {
    const current = { ...v1, system_prompt: 'my prompt', name: 'My Watcher' };
    const next = { ...v1, version: '1.1.0', description: 'new', system_prompt: 'new prompt', name: 'Watcher 2' };
    const r = mergeAuthorUpdate(current, v1, next);
    assert.deepEqual(r.kept, ['name', 'system_prompt']);
    assert.equal(r.editsKnown, true);
    assert.deepEqual(
      [r.spec.version, r.spec.description, r.spec.system_prompt, r.spec.name],
      ['1.1.0', 'new', 'my prompt', 'My Watcher'],
    );
  });

  it('an unchanged copy takes the update in full; a field the author dropped goes', () => {
    const next = { ...v1, version: '1.0.1', icon: undefined };
    const r = mergeAuthorUpdate(v1, v1, next);
    assert.deepEqual(r.kept, []);
    assert.equal('icon' in r.spec, false);
  });

  it('schedules merge subscription by subscription', () => {
    const current = { ...v1, subscriptions: [sub('a', '30m'), sub('b', '2h'), sub('mine', '1d')] };
    const next = { ...v1, version: '1.1', subscriptions: [sub('a', '3h'), sub('b', '4h'), sub('c', '5h')] };
    const r = mergeAuthorUpdate(current, v1, next);
    assert.deepEqual(r.spec.subscriptions, [sub('a', '30m'), sub('b', '4h'), sub('c', '5h'), sub('mine', '1d')]);
    assert.deepEqual(r.kept, ['subscriptions']);
    // A subscription the user removed stays removed; one the author removed and the user left goes.
    const removed = mergeAuthorUpdate({ ...v1, subscriptions: [sub('b', '2h')] }, v1, {
      ...v1,
      subscriptions: [sub('a', '1h')],
    });
    assert.deepEqual(removed.spec.subscriptions, []);
  });

  it('with no earlier author version every difference is kept (editsKnown false)', () => {
    const current = { ...v1, description: 'mine' };
    const next = { ...v1, version: '2.0.0', description: 'new', system_prompt: 'new prompt' };
    const r = mergeAuthorUpdate(current, null, next);
    assert.equal(r.editsKnown, false);
    assert.deepEqual(r.kept, ['description', 'system_prompt']);
    assert.equal(r.spec.version, '2.0.0');
  });
});
