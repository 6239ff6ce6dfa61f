import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { AppChannels, appChatConversationId, appRunConversationId } from '#contracts/apps.js';
import { ErrorCodes } from '#contracts/errors.js';
import { WATCHER_SPEC } from '#testing/fake-apps.js';
import { appsWorld, refusal } from '#testing/service-worlds.js';
import { TurnTexts } from '../../agent/turn-endings.js';
import { AppErrors } from '../apps.service.js';
import { AppChatTexts, threadUpdated } from './app-chat.service.js';

Logger.overrideLogger(false);

const SPEC = { ...WATCHER_SPEC, display_name: 'Price Watcher' };
const UNKNOWN_APP = '00000000-0000-4000-8000-000000000000';

type World = ReturnType<typeof appsWorld>;

describe('AppChatService', () => {
  let w: World;
  /** An app installed in space `s1` (or for every workspace with `spaceId: null`). */
  const install = async (spaceId: string | null = 's1', spec: Record<string, unknown> = SPEC) =>
    w.apps.install({ spec, spaceId });
  const messagesOf = async (conversationId: string) =>
    (await w.conversationRepo.findWithMessages(conversationId))?.messages ?? [];
  const turnsOf = async (conversationId: string) =>
    (await w.turns.listActive()).filter((t) => t.conversationId === conversationId);

  beforeEach(async () => {
    w = appsWorld();
    await w.space('s1');
    await w.space('s2');
  });

  describe('send', () => {
    it("records the message in the default thread of the app's space, queues an app-chat turn and announces the thread", async () => {
      const app = await install();
      const thread = appChatConversationId(app.id);
      const answer = await w.chatService.send(app.id, { spaceId: 's2', message: 'How are prices?' });
      assert.deepEqual(answer, { conversationId: thread });

      const conversation = await w.conversations.findById(thread);
      assert.equal(conversation?.spaceId, 's1', "an app's thread lives in its own space, whatever the caller names");
      assert.equal(conversation?.appId, app.id);
      assert.equal(conversation?.title, 'Price Watcher', 'titled with the display name');
      const [message] = await messagesOf(thread);
      assert.equal(message?.content, 'How are prices?');
      assert.equal(message?.meta.appId, app.id);

      const [turn] = await turnsOf(thread);
      assert.equal(turn?.kind, 'app-chat');
      assert.equal(turn?.spaceId, 's1');
      assert.deepEqual(turn?.request, { appId: app.id, messageId: message?.id }, 'no thinkingEnabled unless a boolean');
      assert.deepEqual(
        w.queue.named('agent.turn').map((j) => j.data),
        [{ turnId: turn!.id, kind: 'app-chat' }],
      );
      assert.deepEqual(w.bus.on(AppChannels.imSessionUpdated), [
        {
          appId: app.id,
          channel: 'app-chat',
          chatId: thread,
          chatType: 'direct',
          instanceId: null,
          lastMessage: 'How are prices?',
        },
      ]);
    });

    it('carries thinkingEnabled into the turn when it is a boolean, and parses images into the message', async () => {
      const app = await install();
      await w.chatService.send(app.id, {
        spaceId: 's1',
        message: 'Look',
        thinkingEnabled: false,
        images: ['data:image/jpeg;base64,BBBB'],
      });
      const [turn] = await turnsOf(appChatConversationId(app.id));
      assert.equal(turn?.request.thinkingEnabled, false);
      const [message] = await messagesOf(appChatConversationId(app.id));
      assert.deepEqual(message?.meta.images, [{ mediaType: 'image/jpeg', data: 'BBBB' }]);
    });

    it('titles the thread with the name when there is no display name', async () => {
      const { display_name: _none, ...plain } = SPEC;
      const app = await install('s1', plain);
      await w.chatService.send(app.id, { spaceId: 's1', message: 'hi' });
      assert.equal((await w.conversations.findById(appChatConversationId(app.id)))?.title, 'Watcher');
    });

    it('hands a second message to the active turn instead of queueing another, and announces each', async () => {
      const app = await install();
      await w.chatService.send(app.id, { spaceId: 's1', message: 'first' });
      await w.chatService.send(app.id, { spaceId: 's1', message: 'and also' });
      const [turn, ...more] = await turnsOf(appChatConversationId(app.id));
      assert.equal(more.length, 0);
      assert.deepEqual(
        turn?.pendingInputs.map((i) => i.content),
        ['and also'],
      );
      assert.equal(w.queue.named('agent.turn').length, 1);
      assert.deepEqual(
        w.bus.on(AppChannels.imSessionUpdated).map((e) => e.lastMessage),
        ['first', 'and also'],
      );
    });

    it('cuts the announced last message to 50 characters', async () => {
      const app = await install();
      const long = 'x'.repeat(60);
      await w.chatService.send(app.id, { spaceId: 's1', message: long });
      assert.equal(w.bus.on(AppChannels.imSessionUpdated)[0]?.lastMessage, 'x'.repeat(50));
      assert.equal((await messagesOf(appChatConversationId(app.id)))[0]?.content, long, 'the message is kept whole');
    });

    it('makes a caller-chosen conversationId a thread of its own, and still answers the default id', async () => {
      const app = await install();
      const answer = await w.chatService.send(app.id, { spaceId: 's1', message: 'Hi', conversationId: 'user-42' });
      assert.deepEqual(answer, { conversationId: appChatConversationId(app.id) });
      assert.equal((await w.conversations.findById('user-42'))?.appId, app.id);
      assert.equal((await messagesOf('user-42'))[0]?.content, 'Hi');
      assert.equal(
        await w.conversations.findById(appChatConversationId(app.id)),
        null,
        'the default thread is untouched',
      );
      assert.equal(w.bus.on(AppChannels.imSessionUpdated)[0]?.chatId, 'user-42');
    });

    it('takes a blank or missing conversationId as the default thread', async () => {
      const app = await install();
      await w.chatService.send(app.id, { spaceId: 's1', message: 'one', conversationId: '  ' });
      await w.chatService.send(app.id, { spaceId: 's1', message: 'two', conversationId: null });
      assert.deepEqual(
        (await messagesOf(appChatConversationId(app.id))).map((m) => m.content),
        ['one', 'two'],
      );
    });

    it("puts a global app's new thread in the space the caller names, and keeps an existing thread where it is", async () => {
      const app = await install(null);
      await w.chatService.send(app.id, { spaceId: 's2', message: 'one' });
      assert.equal((await w.conversations.findById(appChatConversationId(app.id)))?.spaceId, 's2');
      await w.chatService.send(app.id, { spaceId: 's1', message: 'two' });
      assert.equal((await w.conversations.findById(appChatConversationId(app.id)))?.spaceId, 's2');
      assert.equal((await messagesOf(appChatConversationId(app.id))).length, 2);
      assert.ok((await w.turns.listActive()).every((t) => t.spaceId === 's2'));
    });

    it("refuses a message channel's thread and a conversation that is not a thread of this app", async () => {
      const app = await install();
      const other = await install('s1', { ...SPEC, name: 'Other' });
      for (const kind of ['direct', 'group']) {
        await assert.rejects(
          w.chatService.send(app.id, {
            spaceId: 's1',
            message: 'hi',
            conversationId: `app-chat:${app.id}:telegram:${kind}:42`,
          }),
          refusal('conflict', AppChatTexts.channelThread, ErrorCodes.CHAT_THREAD_TAKEN),
        );
      }
      const own = await w.conversations.create('s1', {});
      await assert.rejects(
        w.chatService.send(app.id, { spaceId: 's1', message: 'hi', conversationId: own.id }),
        refusal('conflict', AppChatTexts.threadTaken, ErrorCodes.CHAT_THREAD_TAKEN),
      );
      await w.chatService.send(other.id, { spaceId: 's1', message: 'hi', conversationId: 'shared' });
      await assert.rejects(
        w.chatService.send(app.id, { spaceId: 's1', message: 'hi', conversationId: 'shared' }),
        refusal('conflict', AppChatTexts.threadTaken, ErrorCodes.CHAT_THREAD_TAKEN),
      );
      // A thread id of this app that only looks similar is a thread like any other.
      await w.chatService.send(app.id, { spaceId: 's1', message: 'hi', conversationId: `app-chat:${app.id}:notes` });
      assert.equal(w.bus.on(AppChannels.imSessionUpdated).length, 2, 'nothing announced for a refusal');
      assert.equal((await w.turns.listActive()).length, 2);
    });

    it('refuses bad images before any lookup, an unknown app and an uninstalled one', async () => {
      await assert.rejects(
        w.chatService.send(UNKNOWN_APP, { spaceId: 's1', message: 'hi', images: [{ data: 5 }] }),
        refusal('invalid', 'images[0] must be a base64 string or {data, mediaType}'),
      );
      await assert.rejects(
        w.chatService.send(UNKNOWN_APP, { spaceId: 's1', message: 'hi' }),
        refusal('not_found', AppErrors.notFound(UNKNOWN_APP), ErrorCodes.APP_NOT_FOUND),
      );
      const app = await install();
      await w.apps.uninstall(app.id, false);
      await assert.rejects(
        w.chatService.send(app.id, { spaceId: 's1', message: 'hi' }),
        refusal('conflict', AppErrors.uninstalled, ErrorCodes.APP_UNINSTALLED),
      );
      assert.equal(await w.conversations.findById(appChatConversationId(app.id)), null);
    });
  });

  describe('status, stop and restart', () => {
    it("is generating while any chat thread of the app has a turn, not for its runs or another app's chat", async () => {
      const app = await install();
      const other = await install('s1', { ...SPEC, name: 'Other' });
      assert.deepEqual(await w.chatService.status(app.id), {
        isGenerating: false,
        conversationId: appChatConversationId(app.id),
      });
      await w.runs.startRun(app.id, { type: 'manual' });
      await w.chatService.send(other.id, { spaceId: 's1', message: 'hi' });
      assert.equal((await w.chatService.status(app.id)).isGenerating, false);
      await w.chatService.send(app.id, { spaceId: 's1', message: 'hi', conversationId: 'user-42' });
      assert.equal((await w.chatService.status(app.id)).isGenerating, true);
      await assert.rejects(w.chatService.status(UNKNOWN_APP), refusal('not_found', AppErrors.notFound(UNKNOWN_APP)));
    });

    it("stops every chat thread of the app, answers how many, and leaves its run and other apps' chats alone", async () => {
      const app = await install();
      const other = await install('s1', { ...SPEC, name: 'Other' });
      await w.chatService.send(app.id, { spaceId: 's1', message: 'a' });
      await w.chatService.send(app.id, { spaceId: 's1', message: 'b', conversationId: 'user-42' });
      await w.chatService.send(other.id, { spaceId: 's1', message: 'c' });
      await w.runs.startRun(app.id, { type: 'manual' });

      assert.equal(await w.chatService.stop(app.id), 2);
      const left = (await w.turns.listActive()).map((t) => t.conversationId).sort();
      assert.deepEqual(left, [appChatConversationId(other.id), appRunConversationId(app.id)].sort());
      assert.equal(w.appChat.endedUnplanned.length, 2);
      assert.ok(w.appChat.endedUnplanned.every((e) => e.ending.error === TurnTexts.stopped));
      assert.equal(await w.chatService.stop(app.id), 0, 'nothing left to stop');
    });

    it('restart closes the sessions as stop does, and says how many', async () => {
      const app = await install();
      assert.deepEqual(await w.chatService.restart(app.id), { sessionsClosed: 0 });
      await w.chatService.send(app.id, { spaceId: 's1', message: 'a' });
      assert.deepEqual(await w.chatService.restart(app.id), { sessionsClosed: 1 });
      assert.equal((await w.chatService.status(app.id)).isGenerating, false);
    });
  });

  describe('messages and clear', () => {
    it("answers the default thread's messages only, none before the first message", async () => {
      const app = await install();
      assert.deepEqual(await w.chatService.messages(app.id), []);
      await w.chatService.send(app.id, { spaceId: 's1', message: 'default' });
      await w.chatService.send(app.id, { spaceId: 's1', message: 'own', conversationId: 'user-42' });
      assert.deepEqual(
        (await w.chatService.messages(app.id)).map((m) => m.content),
        ['default'],
      );
      await assert.rejects(w.chatService.messages(UNKNOWN_APP), refusal('not_found', AppErrors.notFound(UNKNOWN_APP)));
    });

    it('stops and deletes the default thread, keeps the others, and the next message starts afresh', async () => {
      const app = await install();
      await w.chatService.clear(app.id); // nothing to clear yet
      await w.chatService.send(app.id, { spaceId: 's1', message: 'old' });
      await w.chatService.send(app.id, { spaceId: 's1', message: 'own', conversationId: 'user-42' });
      await w.chatService.clear(app.id);

      assert.equal(await w.conversations.findById(appChatConversationId(app.id)), null);
      assert.deepEqual(await turnsOf(appChatConversationId(app.id)), [], 'its turn was stopped');
      assert.equal((await turnsOf('user-42')).length, 1, 'a caller-chosen thread is not cleared');
      assert.deepEqual(await w.chatService.messages(app.id), []);
      await w.chatService.send(app.id, { spaceId: 's1', message: 'new' });
      assert.deepEqual(
        (await w.chatService.messages(app.id)).map((m) => m.content),
        ['new'],
      );
    });
  });

  describe('sessionState', () => {
    it("is inactive in the app's space before a message, and active with the turn's thoughts in the thread's space after", async () => {
      const app = await install(null);
      assert.deepEqual(await w.chatService.sessionState(app.id), { isActive: false, thoughts: [], spaceId: null });
      const placed = await install('s1', { ...SPEC, name: 'Placed' });
      assert.deepEqual(await w.chatService.sessionState(placed.id), { isActive: false, thoughts: [], spaceId: 's1' });
      await w.chatService.send(app.id, { spaceId: 's2', message: 'hi' });
      const [turn] = await turnsOf(appChatConversationId(app.id));
      const thought = { type: 'thinking', content: 'Prices first.' };
      await w.turns.saveThoughts(turn!.id, [thought]);
      assert.deepEqual(await w.chatService.sessionState(app.id), {
        isActive: true,
        thoughts: [thought],
        spaceId: 's2',
      });
    });
  });
});

describe('threadUpdated', () => {
  it('describes an HTTP thread as a direct chat of the app-chat channel, with the first 50 characters', () => {
    assert.deepEqual(threadUpdated('a1', 'user-42', 'y'.repeat(51)), {
      appId: 'a1',
      channel: 'app-chat',
      chatId: 'user-42',
      chatType: 'direct',
      instanceId: null,
      lastMessage: 'y'.repeat(50),
    });
  });
});
