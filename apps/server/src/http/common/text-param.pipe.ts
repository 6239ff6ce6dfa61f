import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { DomainError } from '#core/errors/domain-error.js';
import { findUnsafeText } from '#core/errors/text-rules.js';

/**
 * Path parameters with a NUL or an unpaired surrogate (`/api/spaces/%00`) answer 400 naming
 * the parameter, like body and query fields do (jsonBody). A route takes its parameters as one
 * DTO (`@Param() p: SpaceIdParams`, path-params.ts); of several offending ones the last is
 * named, as when each parameter was taken on its own (Nest resolved them last first).
 */
@Injectable()
export class TextParamPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type !== 'param') return value;
    const params: Array<[string, unknown]> =
      metadata.data === undefined && value !== null && typeof value === 'object'
        ? Object.entries(value).reverse()
        : [[metadata.data ?? '', value]];
    for (const [name, param] of params) {
      const unsafe = findUnsafeText(param, name);
      if (unsafe) throw DomainError.invalid(`${unsafe.field} ${unsafe.reason}`);
    }
    return value;
  }
}
