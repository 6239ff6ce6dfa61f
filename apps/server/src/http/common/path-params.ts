import { IsString } from 'class-validator';
import { PathParamsDto } from './validation.js';

/**
 * The path parameters of the routes, one DTO per set of names, shared by every controller
 * whose routes carry that set (`@Param() { spaceId, conversationId }: SpaceConversationParams`).
 * A DTO names every parameter of its route, in the route's order (the order of the OpenAPI
 * document's parameters): the validation whitelist drops one it lacks.
 *
 * Only `@IsString()`: a path parameter is always a string, and an id that names nothing
 * answers the service's own 404 (docs/api.md), so no format is judged here. A NUL or an
 * unpaired surrogate in one answers 400 naming it (TextParamPipe). In the OpenAPI document
 * each field is a required string path parameter (openapi-document.ts).
 */

/** `:spaceId`: a space. */
@PathParamsDto()
export class SpaceIdParams {
  @IsString()
  spaceId: string;
}

/** `:spaceId/conversations/:conversationId`: a conversation of a space. */
@PathParamsDto()
export class SpaceConversationParams {
  @IsString()
  spaceId: string;

  @IsString()
  conversationId: string;
}

/** `…/conversations/:conversationId/messages/:messageId`: a message of a conversation. */
@PathParamsDto()
export class ConversationMessageParams {
  @IsString()
  spaceId: string;

  @IsString()
  conversationId: string;

  @IsString()
  messageId: string;
}

/** `:spaceId/trash/:id`: an entry of a space's trash. */
@PathParamsDto()
export class TrashEntryParams {
  @IsString()
  spaceId: string;

  @IsString()
  id: string;
}

/** `:conversationId` alone (the agent's status of a conversation). */
@PathParamsDto()
export class ConversationIdParams {
  @IsString()
  conversationId: string;
}

/** `:appId`: a digital human. */
@PathParamsDto()
export class AppIdParams {
  @IsString()
  appId: string;
}

/** `:appId/runs/:runId`: a run of a digital human. */
@PathParamsDto()
export class AppRunParams {
  @IsString()
  appId: string;

  @IsString()
  runId: string;
}

/** `:appId/escalation/:entryId`: an escalation of a digital human. */
@PathParamsDto()
export class AppEscalationParams {
  @IsString()
  appId: string;

  @IsString()
  entryId: string;
}

/** `:teamId`: a team. */
@PathParamsDto()
export class TeamIdParams {
  @IsString()
  teamId: string;
}

/** `:teamId/members/:appId`: a member (a digital human) of a team. */
@PathParamsDto()
export class TeamMemberParams {
  @IsString()
  teamId: string;

  @IsString()
  appId: string;
}

/** `:teamId/…/:epochId`: a conversation (epoch) of a team. */
@PathParamsDto()
export class TeamEpochParams {
  @IsString()
  teamId: string;

  @IsString()
  epochId: string;
}

/** `:teamId/triggers/:triggerId`: a trigger of a team. */
@PathParamsDto()
export class TeamTriggerParams {
  @IsString()
  teamId: string;

  @IsString()
  triggerId: string;
}

/** `:kbId`: a knowledge base. */
@PathParamsDto()
export class KbIdParams {
  @IsString()
  kbId: string;
}

/** `:kbId/linked-dirs/:linkId`: a linked folder of a knowledge base. */
@PathParamsDto()
export class KbLinkParams {
  @IsString()
  kbId: string;

  @IsString()
  linkId: string;
}

/** `:instanceId`: a message channel instance. */
@PathParamsDto()
export class ChannelInstanceParams {
  @IsString()
  instanceId: string;
}

/** `:registryId`: a store registry. */
@PathParamsDto()
export class RegistryIdParams {
  @IsString()
  registryId: string;
}

/** `:slug`: a package of the store. */
@PathParamsDto()
export class StoreSlugParams {
  @IsString()
  slug: string;
}

/** `:sourceId`: a model source. */
@PathParamsDto()
export class ModelSourceParams {
  @IsString()
  sourceId: string;
}

/** `:viewId`: a browser page or sign-in view. */
@PathParamsDto()
export class BrowserViewParams {
  @IsString()
  viewId: string;
}

/**
 * `*path`: a webhook's path, one or more segments, which Express hands over as a list. The
 * document describes it by hand (openapi-document.ts, describeOutsideApi).
 */
@PathParamsDto()
export class WebhookPathParams {
  @IsString({ each: true })
  path: string | string[];
}
