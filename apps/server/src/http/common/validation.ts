import { type ArgumentMetadata, ValidationPipe, type ValidationError } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import {
  Allow,
  IS_OPTIONAL,
  IsOptional,
  ValidateBy,
  ValidateIf,
  ValidationTypes,
  getMetadataStorage,
} from 'class-validator';
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
    if (metadata.metatype && isPlainObject(value)) {
      const checked = this.checkedOnly(metadata.metatype, value);
      if (checked) return checked;
    }
    const asEmpty = Array.isArray(value) && !!metadata.metatype && ARRAY_AS_EMPTY.has(metadata.metatype);
    return super.transform(asEmpty ? {} : value, metadata);
  }

  /**
   * A DTO judged by `@Check` rules alone (checkOnlyRules), sent fields of plain values that pass
   * every rule: the instance class-transformer builds, the rules run here in their order, without
   * class-validator's per-request work (looking up the class's rules, an error object per field,
   * copying the value twice): some 20 µs of a request. Anything else, a failing rule included,
   * answers null and takes the full validation, whose answer and error text it then is.
   */
  private checkedOnly(dto: Dto, value: Record<string, unknown>): object | null {
    const rules = checkOnlyRules(dto);
    if (rules === null) return null;
    for (const key of Object.keys(value)) {
      const field = value[key];
      if (!rules.names.has(key) || (typeof field === 'object' && field !== null) || typeof field === 'function')
        return null;
    }
    const entity = plainToInstance(dto as new () => object, value, this.transformOptions) as Record<string, unknown>;
    for (const key of Object.keys(entity)) if (!rules.names.has(key)) return null;
    try {
      for (const field of rules.fields) {
        const sent = entity[field.name];
        if (field.optional && (sent === undefined || sent === null)) continue;
        if (!field.tests.every((test) => test(sent))) return null;
      }
    } catch {
      return null;
    }
    return entity;
  }
}

/** A field of a DTO judged by `@Check` rules alone: its tests in declaration order. */
interface CheckedField {
  name: string;
  /** `@IsOptional()`: an absent or null value is not judged. */
  optional: boolean;
  tests: Array<(value: unknown) => boolean>;
}

const CHECK_ONLY_RULES = new Map<Dto, { names: ReadonlySet<string>; fields: readonly CheckedField[] } | null>();

/**
 * The rules of a DTO whose every rule is a `@Check` test, `@Documented` (kept, not judged) or
 * `@IsOptional()`, read once from class-validator's metadata; null for any other DTO (other
 * rules, groups, nested objects, `each`) and for one without rules.
 */
function checkOnlyRules(dto: Dto): { names: ReadonlySet<string>; fields: readonly CheckedField[] } | null {
  let rules = CHECK_ONLY_RULES.get(dto);
  if (rules !== undefined) return rules;
  const fields = new Map<string, CheckedField>();
  let eligible = true;
  for (const rule of getMetadataStorage().getTargetValidationMetadatas(dto, '', false, false)) {
    const field = fields.get(rule.propertyName) ?? { name: rule.propertyName, optional: false, tests: [] };
    fields.set(rule.propertyName, field);
    const test = rule.constraints?.[0] as unknown;
    const plain = !rule.each && !rule.always && !rule.groups?.length && rule.validateIf === undefined;
    if (plain && rule.type === ValidationTypes.CUSTOM_VALIDATION && rule.name === CHECK && typeof test === 'function')
      field.tests.push(test as (value: unknown) => boolean);
    else if (plain && rule.type === ValidationTypes.CONDITIONAL_VALIDATION && test === JUDGE_ALWAYS) continue;
    else if (plain && rule.type === ValidationTypes.CONDITIONAL_VALIDATION && rule.name === IS_OPTIONAL)
      field.optional = true;
    else if (rule.type !== ValidationTypes.WHITELIST) eligible = false;
  }
  rules = eligible && fields.size > 0 ? { names: new Set(fields.keys()), fields: [...fields.values()] } : null;
  CHECK_ONLY_RULES.set(dto, rules);
  return rules;
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
/** The condition of `@Check`'s ValidateIf: every value is judged. */
const JUDGE_ALWAYS = (): boolean => true;

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
    // The test is also the rule's constraint, for the pipe's quick path (checkOnlyRules).
    ValidateBy({
      name: CHECK,
      constraints: [test],
      validator: { validate: (value) => test(value), defaultMessage: () => message },
    })(target, key);
    // Optional in the document (class-validator-jsonschema leaves a field with a conditional
    // rule out of `required`), while the rule still judges every value, null included.
    if (!required) ValidateIf(JUDGE_ALWAYS)(target, key as string);
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
