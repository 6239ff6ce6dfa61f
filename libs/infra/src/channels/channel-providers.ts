import type { ChannelSettings } from '#core/config/app-config.js';
import { type ChannelProvider, ChannelProviders } from '#core/channels/channel-provider.port.js';
import { ChannelFetch } from './channel-fetch.js';
import { EmailChannelProvider } from './email-channel.provider.js';
import { FeishuChannelProvider } from './feishu-channel.provider.js';
import { SlackChannelProvider } from './slack-channel.provider.js';
import { TelegramChannelProvider } from './telegram-channel.provider.js';
import { WebhookChannelProvider } from './webhook-channel.provider.js';

/** The providers this server offers (docs/api/channels.md, "Providers"); a new platform is one more line. */
export class BuiltinChannelProviders extends ChannelProviders {
  private readonly list: readonly ChannelProvider[];

  constructor(settings: ChannelSettings) {
    super();
    const http = new ChannelFetch(settings.allow);
    this.list = [
      new WebhookChannelProvider(http),
      new TelegramChannelProvider(http, settings.publicUrl),
      new SlackChannelProvider(http),
      new FeishuChannelProvider(http),
      new EmailChannelProvider(http),
    ];
  }

  all(): readonly ChannelProvider[] {
    return this.list;
  }
}
