import { SettingEntity } from './entities/setting.entity.js';
import { SpaceEntity } from './entities/space.entity.js';
import { Init1763700000000 } from './migrations/1763700000000-init.js';
import { Spaces1763800000000 } from './migrations/1763800000000-spaces.js';
import { ConversationEntity } from './entities/conversation.entity.js';
import { ConversationMessageEntity } from './entities/conversation-message.entity.js';
import { ConversationThoughtEntity } from './entities/conversation-thought.entity.js';
import { Conversations1763800000100 } from './migrations/1763800000100-conversations.js';
import { AgentTurnEntity } from './entities/agent-turn.entity.js';
import { AgentTurns1763900000000 } from './migrations/1763900000000-agent-turns.js';
import { TurnKind1764000000000 } from './migrations/1764000000000-turn-kind.js';
import { ConversationTextIds1764000000100 } from './migrations/1764000000100-conversation-text-ids.js';
import { AppEntity } from './entities/app.entity.js';
import { AppActivityEntity } from './entities/app-activity.entity.js';
import { Apps1764100000000 } from './migrations/1764100000000-apps.js';
import { SpaceOwnsFolder1764200000000 } from './migrations/1764200000000-space-owns-folder.js';
import { StoreIndexEntity, StoreInstallEntity, StoreSourceEntity } from './entities/store.entity.js';
import { Store1764900000000 } from './migrations/1764900000000-store.js';
import {
  TriggerClaimEntity,
  TriggerDeliveryEntity,
  TriggerDeliveryRefusalEntity,
  TriggerOccurrenceEntity,
  TriggerScheduleEntity,
} from './entities/trigger.entities.js';
import { Triggers1765000000000 } from './migrations/1765000000000-triggers.js';
import { AppConversations1765100000000 } from './migrations/1765100000000-app-conversations.js';
import { TriggerOccurrences1765250000000 } from './migrations/1765250000000-trigger-occurrences.js';
import { SubmitUserMessage1765300000000 } from './migrations/1765300000000-submit-user-message.js';
import { SubmitUserMessageChecks1765400000000 } from './migrations/1765400000000-submit-user-message-checks.js';
import { SubmitUserMessageFirstMeta1765500000000 } from './migrations/1765500000000-submit-user-message-first-meta.js';
import { TurnApprovals1765630000000 } from './migrations/1765630000000-turn-approvals.js';
import { BrowserProfileEntity } from './entities/browser-profile.entity.js';
import { BrowserProfiles1765600000000 } from './migrations/1765600000000-browser-profiles.js';
import {
  TeamActivityEntity,
  TeamEdgeEntity,
  TeamEntity,
  TeamEpochEntity,
  TeamFindingEntity,
  TeamMailboxEntity,
  TeamMemberEntity,
  TeamTaskEntity,
  TeamTriggerEntity,
} from './entities/team.entities.js';
import { Teams1765700000000 } from './migrations/1765700000000-teams.js';
import { TeamTriggers1765750000000 } from './migrations/1765750000000-team-triggers.js';
import { Knowledge1765900000000 } from './migrations/1765900000000-knowledge.js';
import { ChannelClaimEntity, ChannelInstanceEntity, ChannelThreadEntity } from './entities/channel.entities.js';
import { Channels1765800000000 } from './migrations/1765800000000-channels.js';
import { TriggerDeliveries1766000000000 } from './migrations/1766000000000-trigger-deliveries.js';
import { SpacePathsRelative1766000000100 } from './migrations/1766000000100-space-paths-relative.js';
import { KnowledgeVectors1766100000000 } from './migrations/1766100000000-knowledge-vectors.js';
import { ChannelThreadPeer1766100000100 } from './migrations/1766100000100-channel-thread-peer.js';
import { KnowledgeLinks1766131415926 } from './migrations/1766131415926-knowledge-links.js';
import { KnowledgeChunkVersion1766200000000 } from './migrations/1766200000000-knowledge-chunk-version.js';
import { CompleteTurn1766300000000 } from './migrations/1766300000000-complete-turn.js';
import { AppWebhookPathIndex1766400000000 } from './migrations/1766400000000-app-webhook-path-index.js';
import { AcceptTriggerDelivery1766400000100 } from './migrations/1766400000100-accept-trigger-delivery.js';
import { SubmitUserMessageLiveInput1766400000200 } from './migrations/1766400000200-submit-user-message-live-input.js';
import { KnowledgeLexemeCounts1766500000000 } from './migrations/1766500000000-knowledge-lexeme-counts.js';
import { TurnEndPending1766600000000 } from './migrations/1766600000000-turn-end-pending.js';
import { AppendMessage1766700000000 } from './migrations/1766700000000-append-message.js';
import { ConversationMessageRunIndex1766800000000 } from './migrations/1766800000000-conversation-message-run-index.js';
import { ConversationMessageCompactionIndex1766900000000 } from './migrations/1766900000000-conversation-message-compaction-index.js';
import { AppendMessageThoughts1767000000000 } from './migrations/1767000000000-append-message-thoughts.js';

/** Every entity and migration, in order. Add new ones here. */
export const ENTITIES = [
  SettingEntity,
  SpaceEntity,
  ConversationEntity,
  ConversationMessageEntity,
  ConversationThoughtEntity,
  AgentTurnEntity,
  AppEntity,
  AppActivityEntity,
  StoreSourceEntity,
  StoreIndexEntity,
  StoreInstallEntity,
  TriggerScheduleEntity,
  TriggerClaimEntity,
  TriggerOccurrenceEntity,
  BrowserProfileEntity,
  TeamEntity,
  TeamMemberEntity,
  TeamEdgeEntity,
  TeamEpochEntity,
  TeamTaskEntity,
  TeamFindingEntity,
  TeamActivityEntity,
  TeamMailboxEntity,
  TeamTriggerEntity,
  ChannelInstanceEntity,
  ChannelThreadEntity,
  ChannelClaimEntity,
  TriggerDeliveryEntity,
  TriggerDeliveryRefusalEntity,
];
export const MIGRATIONS = [
  Init1763700000000,
  Spaces1763800000000,
  Conversations1763800000100,
  AgentTurns1763900000000,
  TurnKind1764000000000,
  ConversationTextIds1764000000100,
  Apps1764100000000,
  SpaceOwnsFolder1764200000000,
  Store1764900000000,
  Triggers1765000000000,
  AppConversations1765100000000,
  TriggerOccurrences1765250000000,
  SubmitUserMessage1765300000000,
  SubmitUserMessageChecks1765400000000,
  SubmitUserMessageFirstMeta1765500000000,
  BrowserProfiles1765600000000,
  TurnApprovals1765630000000,
  Teams1765700000000,
  TeamTriggers1765750000000,
  Channels1765800000000,
  Knowledge1765900000000,
  TriggerDeliveries1766000000000,
  SpacePathsRelative1766000000100,
  KnowledgeVectors1766100000000,
  ChannelThreadPeer1766100000100,
  KnowledgeLinks1766131415926,
  KnowledgeChunkVersion1766200000000,
  CompleteTurn1766300000000,
  AppWebhookPathIndex1766400000000,
  AcceptTriggerDelivery1766400000100,
  SubmitUserMessageLiveInput1766400000200,
  KnowledgeLexemeCounts1766500000000,
  TurnEndPending1766600000000,
  AppendMessage1766700000000,
  ConversationMessageRunIndex1766800000000,
  ConversationMessageCompactionIndex1766900000000,
  AppendMessageThoughts1767000000000,
];
