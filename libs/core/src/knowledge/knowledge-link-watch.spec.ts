import { Logger } from '@nestjs/common';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecordingEventBus } from '#testing/fake-agent-ports.js';
import { waitFor } from '#testing/fakes.js';
import type { ArtifactWatchService } from '../artifacts/artifact-watch.service.js';
import { KnowledgeLinkWatch } from './knowledge-link-watch.js';
import type { KnowledgeService } from './knowledge.service.js';

Logger.overrideLogger(false);

describe('KnowledgeLinkWatch', () => {
  it('reads a space’s links again once its watch opens (changes before it were seen by no one)', async () => {
    const hook: { opened?: (spaceId: string) => void } = {};
    const watch = {
      isLeader: () => true,
      onWatchOpened: (listener: (spaceId: string) => void) => {
        hook.opened = listener;
        return () => delete hook.opened;
      },
    } as unknown as ArtifactWatchService;
    const synced: string[] = [];
    const knowledge = {
      linksInSpace: async (spaceId: string) => (spaceId === 's1' ? [{ id: 'l1', path: 'docs' }] : []),
      syncLink: async (linkId: string) => void synced.push(linkId),
    } as unknown as KnowledgeService;
    const links = new KnowledgeLinkWatch(watch, knowledge, new RecordingEventBus());
    links.onApplicationBootstrap();
    try {
      assert.ok(hook.opened, 'listens for opened watches');
      hook.opened('s2');
      hook.opened('s1');
      await waitFor(() => synced.length > 0, { what: 'the link synced' });
      assert.deepEqual(synced, ['l1']);
    } finally {
      links.onModuleDestroy();
    }
    assert.equal(hook.opened, undefined, 'stops listening');
  });
});
