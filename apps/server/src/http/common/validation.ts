import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { DomainError } from '#core/errors/domain-error.js';

/** DTO validation whose message names every offending field. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    transform: true,
    exceptionFactory: (errors: ValidationError[]) => DomainError.invalid(describe(errors).join('; ')),
  });
}

function describe(errors: ValidationError[], parent = ''): string[] {
  return errors.flatMap((e) => {
    const field = parent ? `${parent}.${e.property}` : e.property;
    const own = Object.values(e.constraints ?? {}).map((msg) =>
      msg.startsWith(e.property) ? `${field}${msg.slice(e.property.length)}` : `${field}: ${msg}`,
    );
    return [...own, ...describe(e.children ?? [], field)];
  });
}
