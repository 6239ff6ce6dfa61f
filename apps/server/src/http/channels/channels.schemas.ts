import { anyObject, arr, bool, component, isoTime, nullable, obj, oneOfValues, str } from '../openapi/schema.js';

/** Response schemas of the Message channels operations (docs/api/channels.md). */

const STATE = oneOfValues(['connecting', 'online', 'standby', 'offline']);

export const CHANNEL_INSTANCE = component(
  'ChannelInstance',
  obj(
    {
      id: str(),
      type: str(),
      name: str(),
      enabled: bool(),
      appId: str(),
      teamId: nullable(str()),
      config: anyObject('Credentials answered as "***"'),
      replyScope: oneOfValues(['all', 'group', 'direct']),
      owners: arr(str()),
      guestPolicy: oneOfValues(['deny', 'chat-only']),
      streaming: bool(),
      state: STATE,
      reason: nullable(str()),
      createdAt: isoTime(),
      updatedAt: isoTime(),
    },
    [
      'id',
      'type',
      'name',
      'enabled',
      'appId',
      'teamId',
      'config',
      'replyScope',
      'owners',
      'guestPolicy',
      'streaming',
      'state',
      'reason',
      'createdAt',
      'updatedAt',
    ],
  ),
);

export const CHANNEL_PROVIDER = component(
  'ChannelProvider',
  obj(
    {
      type: str(),
      displayName: str(),
      description: str(),
      direction: oneOfValues(['bidirectional', 'inbound-only']),
      configFields: arr(
        obj(
          {
            key: str(),
            label: str(),
            type: oneOfValues(['string', 'secret', 'url', 'boolean']),
            required: bool(),
            description: str(),
          },
          ['key', 'label', 'type', 'required'],
        ),
      ),
      defaultConfig: anyObject(),
    },
    ['type', 'displayName', 'description', 'direction', 'configFields', 'defaultConfig'],
  ),
);

export const CHANNEL_STATUS = component(
  'ChannelStatus',
  obj(
    {
      id: str(),
      type: str(),
      enabled: bool(),
      connected: bool(),
      state: STATE,
      appId: str(),
      appName: nullable(str()),
      reason: nullable(str()),
    },
    ['id', 'type', 'enabled', 'connected', 'state', 'appId', 'appName', 'reason'],
  ),
);

export const IM_SESSION = component(
  'ImSession',
  obj(
    {
      appId: str(),
      channel: str(),
      instanceId: str(),
      chatType: oneOfValues(['direct', 'group']),
      chatId: str(),
      displayName: str(),
      customName: nullable(str()),
      proactive: bool(),
      lastMessageAt: nullable(isoTime()),
    },
    ['appId', 'channel', 'instanceId', 'chatType', 'chatId', 'displayName', 'customName', 'proactive', 'lastMessageAt'],
  ),
);
