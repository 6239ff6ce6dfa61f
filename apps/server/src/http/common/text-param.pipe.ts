import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { DomainError } from '#core/errors/domain-error.js';
import { findUnsafeText } from '#core/errors/text-rules.js';

/**
 * Path parameters with a NUL or an unpaired surrogate (`/api/spaces/%00`) answer 400 naming
 * the parameter, like body and query fields do (jsonBody).
 */
@Injectable()
export class TextParamPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type !== 'param') return value;
    const unsafe = findUnsafeText(value, metadata.data ?? '');
    if (unsafe) throw DomainError.invalid(`${unsafe.field} ${unsafe.reason}`);
    return value;
  }
}
