import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isConversationId } from '#core/conversations/conversation-rules.js';
import { channelThreadId } from '#contracts/channels.js';
import { ChannelFetch } from './channel-fetch.js';
import {
  EMAIL_MAX_ADDRESS,
  EmailChannelProvider,
  emailAddressOf,
  emailChatId,
  replyText,
} from './email-channel.provider.js';

const APP = '3d4e7fe9-2c59-482a-8167-fad721c3c89e';

describe('email channel: chat ids, reply text, config', () => {
  it('a chat id holds the address (written safe for a conversation id) and the root, and gives the address back', () => {
    for (const address of ['alice@example.com', 'Bob.Smith+tag@mail.example.org', "o'neil_x@ex.com", 'zoë@bücher.de']) {
      const chatId = emailChatId(address, '<root.1@client>')!;
      assert.ok(isConversationId(channelThreadId(APP, 'email', 'direct', chatId)), chatId);
      assert.equal(emailAddressOf(chatId), address.toLowerCase());
    }
    assert.match(emailChatId('alice@example.com', '<r@x>')!, /^alice@example\.com:[0-9a-f]{12}$/);
    assert.notEqual(emailChatId('a@x.com', '<r1@x>'), emailChatId('a@x.com', '<r2@x>'), 'one thread per conversation');
    assert.equal(emailChatId(`${'a'.repeat(EMAIL_MAX_ADDRESS)}@x.com`, '<r@x>'), null, 'too long to answer');
  });

  it('the reply text leaves out the quoted mail and the signature', () => {
    assert.equal(replyText('Yes, please.\n\nOn Sat, 28 Nov 2026, Bot wrote:\n> Shall I?\n'), 'Yes, please.');
    assert.equal(replyText('First\n> quoted\nSecond\n-- \nAlice\n'), 'First\nSecond');
    assert.equal(replyText('Ok\r\n\r\n-----Original Message-----\r\nFrom: bot'), 'Ok');
  });

  it('config problems name the field', () => {
    const p = new EmailChannelProvider(new ChannelFetch([]));
    const good = {
      imapHost: 'imap.example.com',
      imapUser: 'u',
      imapPassword: 'p',
      smtpHost: 'smtp.example.com',
      fromAddress: 'bot@example.com',
    };
    assert.equal(p.configProblem(good), null);
    assert.equal(p.configProblem({ ...good, imapPort: '99999' }), 'config.imapPort must be a port number (1-65535)');
    assert.equal(p.configProblem({ ...good, smtpTls: 'ssl' }), 'config.smtpTls must be "tls", "starttls" or "none"');
    assert.equal(p.configProblem({ ...good, smtpHost: 'smtp host' }), 'config.smtpHost must be a host name or address');
    assert.equal(p.configProblem({ ...good, fromAddress: 'bot' }), 'config.fromAddress must be an email address');
  });

  it('a mail server on a loopback or private address is refused unless SVC_CHANNEL_ALLOW names it', async () => {
    assert.match(String(await new ChannelFetch([]).checkHost('127.0.0.1')), /blocked by the channel policy/);
    assert.match(String(await new ChannelFetch([]).checkHost('10.1.2.3')), /blocked by the channel policy/);
    assert.deepEqual(await new ChannelFetch(['127.0.0.1']).checkHost('127.0.0.1'), { address: null });
    assert.deepEqual(await new ChannelFetch([]).checkHost('93.184.216.34'), { address: '93.184.216.34' });
  });
});
