import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDetachedPage, retryWhileDetached } from './cdp-retry.js';

const detached = () => new Error('Protocol error (Page.startScreencast): Not attached to an active page');

describe('retryWhileDetached', () => {
  it('tries a command again while the page is between renderers, then answers', async () => {
    let calls = 0;
    const answer = await retryWhileDetached(
      async () => {
        calls += 1;
        if (calls < 3) throw detached();
        return 'started';
      },
      { tries: 5, delayMs: 1 },
    );
    assert.equal(answer, 'started');
    assert.equal(calls, 3);
  });

  it('gives up after the last try with the page error', async () => {
    let calls = 0;
    await assert.rejects(
      retryWhileDetached(
        async () => {
          calls += 1;
          throw detached();
        },
        { tries: 4, delayMs: 1 },
      ),
      /Not attached to an active page/,
    );
    assert.equal(calls, 4);
  });

  it('passes any other failure on at once', async () => {
    let calls = 0;
    await assert.rejects(
      retryWhileDetached(
        async () => {
          calls += 1;
          throw new Error('Page.startScreencast timed out after 15000ms');
        },
        { tries: 5, delayMs: 1 },
      ),
      /timed out/,
    );
    assert.equal(calls, 1);
    assert.equal(isDetachedPage('Not attached to an active page'), false, 'only errors count');
  });
});
