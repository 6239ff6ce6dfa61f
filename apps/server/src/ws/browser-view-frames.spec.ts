import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseViewerInput, routeBrowserViews, viewIdOf } from './browser-view-frames.js';

describe('live-view frames', () => {
  it('accepts the viewer frames of the contract, stripped to their fields', () => {
    assert.deepEqual(parseViewerInput({ type: 'ack', seq: 3, extra: 1 }), { type: 'ack', seq: 3 });
    assert.deepEqual(
      parseViewerInput({ type: 'mouse', event: 'mousePressed', x: 1, y: 2.5, button: 'left', clickCount: 1 }),
      { type: 'mouse', event: 'mousePressed', x: 1, y: 2.5, button: 'left', clickCount: 1 },
    );
    assert.deepEqual(parseViewerInput({ type: 'key', event: 'keyDown', key: 'Enter', text: '\r' }), {
      type: 'key',
      event: 'keyDown',
      key: 'Enter',
      text: '\r',
    });
    assert.deepEqual(parseViewerInput({ type: 'text', text: 'hello' }), { type: 'text', text: 'hello' });
    assert.deepEqual(parseViewerInput({ type: 'viewport', width: 1280, height: 720 }), {
      type: 'viewport',
      width: 1280,
      height: 720,
    });
  });

  it('names what is wrong with a frame', () => {
    assert.match(parseViewerInput({ type: 'ack', seq: -1 }) as string, /^ack: seq/);
    assert.match(parseViewerInput({ type: 'mouse', event: 'click', x: 1, y: 1 }) as string, /^mouse: event/);
    assert.match(parseViewerInput({ type: 'mouse', event: 'mouseMoved', x: 'a', y: 1 }) as string, /x and y/);
    assert.match(parseViewerInput({ type: 'key', event: 'keyDown', key: '' }) as string, /^key: key/);
    assert.match(parseViewerInput({ type: 'text', text: 5 }) as string, /^text:/);
    assert.match(parseViewerInput({ type: 'viewport', width: 10, height: 720 }) as string, /^viewport:/);
    assert.match(parseViewerInput({ type: 'subscribe' }) as string, /Unknown frame type: subscribe/);
  });

  it('routes /ws/browser/<viewId> to the gateway’s path with the view in the query', () => {
    let listener: ((req: { url?: string }) => void) | undefined;
    routeBrowserViews({ prependListener: (_event, l) => (listener = l) });
    const req = { url: '/ws/browser/view%201?x=1' };
    listener!(req);
    assert.equal(req.url, '/ws/browser?x=1&view=view+1');
    assert.equal(viewIdOf(req.url), 'view 1');
    const other = { url: '/ws' };
    listener!(other);
    assert.equal(other.url, '/ws');
    assert.equal(viewIdOf('/ws/browser'), null);
  });
});
