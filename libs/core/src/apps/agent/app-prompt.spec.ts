import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { App } from '../../kernel/app.js';
import { appChatEffort, appModelPin } from './app-prompt.js';

const withOverrides = (userOverrides: Record<string, unknown>) => ({ userOverrides }) as App;

describe("an app's model choice (userOverrides)", () => {
  it('a source with a model, a source alone (its default model), or nothing (the current source)', () => {
    assert.deepEqual(appModelPin(withOverrides({ modelSourceId: 's', modelId: 'm' })), {
      modelSourceId: 's',
      modelId: 'm',
    });
    assert.deepEqual(appModelPin(withOverrides({ modelSourceId: 's' })), { modelSourceId: 's', modelId: null });
    assert.equal(appModelPin(withOverrides({ modelId: 'm' })), null, 'a model without its source is no choice');
    assert.equal(appModelPin(withOverrides({})), null);
  });

  it('the chat effort only when it is a known level', () => {
    assert.equal(appChatEffort(withOverrides({ chatReasoningEffort: 'high' })), 'high');
    assert.equal(appChatEffort(withOverrides({ chatReasoningEffort: 'max' })), null);
    assert.equal(appChatEffort(withOverrides({})), null);
  });
});
