import { applyDecorators } from '@nestjs/common';
import { ApiExtension } from '../openapi/swagger-decorators.js';

/** The OpenAPI operation extension that marks an operation `Assistant`. */
export const ASSISTANT_EXTENSION = 'x-svc-assistant';

/**
 * Marks an operation `Assistant` (docs/api.md, "The assistant's own access to the API"): the built-in assistant may call it through its
 * own listener when its operate-the-service capability is on. The mark travels in the OpenAPI
 * document, which is also where the listener reads the list of reachable operations from.
 */
export const Assistant = (): MethodDecorator => applyDecorators(ApiExtension(ASSISTANT_EXTENSION, true));
