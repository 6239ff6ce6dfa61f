import { type ArgumentMetadata, ValidationPipe, type ValidationError } from '@nestjs/common';
import { Allow, IsOptional, ValidateBy, ValidateIf, getMetadataStorage } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { DomainError } from '#core/errors/domain-error.js';

/** The JSON Schema of a DTO field, as `@Check` and `@Documented` take it. */
export type Schema = Exclude<Parameters<typeof JSONSchema>[0], (...args: never[]) => unknown>;

const ARRAY_AS_EMPTY = new WeakSet<object>();

/**
 * An array body is read as an empty object (every field absent), as the route read its body
 * field by field before it had a DTO; without this mark an array answers 400 (object expected).
 */
export function ArrayBodyAsEmpty(): ClassDecorator {
  return (target) => {
    ARRAY_AS_EMPTY.add(target);
  };
}

type Dto = abstract new (...args: never[]) => unknown;

const OPEN_BODIES = new Set<Dto>();

/**
 * A body whose keys are open by the interface (a merge patch, a configuration, a settings
 * map): the DTO lists the known fields, for the OpenAPI document and for any rule it declares,
 * and the handler gets the body as sent, every key kept (the whitelist would drop the others).
 * A body that is not a JSON object (absent, an array, a scalar) reaches the handler unchanged,
 * so the service answers it with its own text (docs/api.md), as before the route had a DTO.
 */
export function OpenBody(schema: Schema = {}): ClassDecorator {
  return (target) => {
    OPEN_BODIES.add(target as unknown as Dto);
    JSONSchema({ ...schema, additionalProperties: true })(target);
  };
}

export const openBodies = (): ReadonlyArray<Dto> => [...OPEN_BODIES];

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  !!value && typeof value === 'object' && !Array.isArray(value);

class EdgeValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'param' && metadata.metatype && PATH_PARAMS_DTOS.has(metadata.metatype)) {
      const checked = plainPathParams(metadata.metatype, value);
      if (checked) return checked;
    }
    if (metadata.metatype && OPEN_BODIES.has(metadata.metatype)) {
      if (!isPlainObject(value)) return value;
      // Judges the declared fields (a failure answers 400 naming them); the rest is kept.
      await super.transform({ ...value }, metadata);
      return value;
    }
    const asEmpty = Array.isArray(value) && !!metadata.metatype && ARRAY_AS_EMPTY.has(metadata.metatype);
    return super.transform(asEmpty ? {} : value, metadata);
  }
}

const QUERY_DTOS = new Set<Dto>();

/**
 * A DTO of query parameters (`@Query() q: SomeQuery`): the OpenAPI document lists each of its
 * fields as a query parameter (openapi-document.ts), with the schema of its rules.
 */
export function QueryDto(): ClassDecorator {
  return (target) => {
    QUERY_DTOS.add(target as unknown as Dto);
  };
}

export const queryDtos = (): ReadonlyArray<Dto> => [...QUERY_DTOS];

const PATH_PARAMS_DTOS = new Set<Dto>();

/**
 * A DTO of a route's path parameters (`@Param() { spaceId }: SpaceIdParams`, common/path-params.ts):
 * the OpenAPI document lists each of its fields as a path parameter (openapi-document.ts). It
 * names every parameter of the route: the validation whitelist drops any it does not declare.
 */
export function PathParamsDto(): ClassDecorator {
  return (target) => {
    PATH_PARAMS_DTOS.add(target as unknown as Dto);
  };
}

export const pathParamsDtos = (): ReadonlyArray<Dto> => [...PATH_PARAMS_DTOS];

const PARAM_NAMES = new Map<Dto, readonly string[]>();

/**
 * The common case of a path parameters DTO without class-validator's per-request work: every
 * declared parameter a string (what the router hands over, so `@IsString()` holds), kept by name
 * as the whitelist would. Anything else (a wildcard's list of segments) returns null and goes
 * through the full validation. Keeps the request path as cheap as before the DTOs.
 */
function plainPathParams(dto: Dto, value: unknown): Record<string, string> | null {
  if (!isPlainObject(value)) return null;
  let names = PARAM_NAMES.get(dto);
  if (!names) {
    const declared = getMetadataStorage()
      .getTargetValidationMetadatas(dto, '', true, false)
      .map((m) => m.propertyName);
    names = [...new Set(declared)];
    PARAM_NAMES.set(dto, names);
  }
  const out: Record<string, string> = {};
  for (const name of names) {
    const param = value[name];
    if (typeof param !== 'string') return null;
    out[name] = param;
  }
  return out;
}

/** DTO validation whose message names every offending field. */
export function createValidationPipe(): ValidationPipe {
  return new EdgeValidationPipe({
    whitelist: true,
    transform: true,
    exceptionFactory: (errors: ValidationError[]) => DomainError.invalid(describe(firstOfChecks(errors)).join('; ')),
  });
}

const CHECK = 'check';

/**
 * A body judged by `@Check` rules alone answers only its first offending field (in
 * declaration order), as the route's checks did one after another before it had a DTO.
 */
function firstOfChecks(errors: ValidationError[]): ValidationError[] {
  const onlyChecks = errors.every(
    (e) => !e.children?.length && Object.keys(e.constraints ?? {}).every((name) => name === CHECK),
  );
  return onlyChecks ? errors.slice(0, 1) : errors;
}

/**
 * A field rule with the exact text the route answers when it fails (`<field> …`, 400; the
 * texts of docs/api.md); `schema` documents the field in the OpenAPI document. The test sees
 * every value, absent and null included (unless the field is also `@IsOptional()`).
 *
 * The document marks the field required when the test refuses an absent value; one it lets
 * through (and the service then judges) is documented as optional, unless `required: true`
 * says that the service requires it.
 */
export function Check(
  test: (value: unknown) => boolean,
  message: string,
  schema: Schema,
  options: { required?: boolean } = {},
): PropertyDecorator {
  const required = options.required ?? !acceptsAbsent(test);
  return (target, key) => {
    ValidateBy({ name: CHECK, validator: { validate: (value) => test(value), defaultMessage: () => message } })(
      target,
      key,
    );
    // Optional in the document (class-validator-jsonschema leaves a field with a conditional
    // rule out of `required`), while the rule still judges every value, null included.
    if (!required) ValidateIf(() => true)(target, key as string);
    // The whole schema: the design type of a custom rule would otherwise add a `$ref`.
    JSONSchema(() => schema)(target, key as string);
  };
}

/**
 * A field the service checks itself (after a lookup that answers first, e.g. 404): kept
 * through the whitelist and documented (as required with `required: true`), not judged here.
 */
export function Documented(schema: Schema, options: { required?: boolean } = {}): PropertyDecorator {
  return (target, key) => {
    (options.required ? Allow() : IsOptional())(target, key);
    // The whole schema: the design type of a custom rule would otherwise add a `$ref`.
    JSONSchema(() => schema)(target, key as string);
  };
}

function acceptsAbsent(test: (value: unknown) => boolean): boolean {
  try {
    return test(undefined);
  } catch {
    return false;
  }
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

/**
 * The optional `images` of a chat message (the assistant's chat and a digital human's): a list
 * whose items the service judges (base64 strings, data URLs or `{data, mediaType}`).
 */
export function ImagesField(): PropertyDecorator {
  return (target, key) => {
    IsOptional()(target, key);
    Check((v) => Array.isArray(v), 'images must be an array', {
      type: 'array',
      items: {
        oneOf: [
          { type: 'string', description: 'Base64, or a data URL' },
          {
            type: 'object',
            properties: {
              type: { type: 'string' },
              mediaType: { type: 'string' },
              data: { type: 'string', description: 'Base64' },
            },
          },
        ],
      },
    })(target, key);
  };
}
