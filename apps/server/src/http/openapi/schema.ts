/**
 * Small JSON Schema (OpenAPI 3.1) builders for the API document: the `data` of responses
 * (response-schemas.ts).
 *
 * `shape<T>()` ties a schema to a contracts type: every field of `T` must be listed, the
 * optional ones wrapped in `opt()`, so adding or removing a field in `libs/contracts`
 * without updating its schema fails the typecheck.
 */

/** A JSON Schema object. */
export type Schema = Record<string, unknown>;

const described = (schema: Schema, description?: string): Schema => (description ? { ...schema, description } : schema);

export const str = (description?: string): Schema => described({ type: 'string' }, description);
export const num = (description?: string): Schema => described({ type: 'number' }, description);
export const int = (description?: string): Schema => described({ type: 'integer' }, description);
export const bool = (description?: string): Schema => described({ type: 'boolean' }, description);
/** ISO 8601 date-time text. */
export const isoTime = (description?: string): Schema =>
  described({ type: 'string', format: 'date-time' }, description);
export const arr = (items: Schema, description?: string): Schema => described({ type: 'array', items }, description);
export const oneOfValues = (values: readonly string[], description?: string): Schema =>
  described({ type: 'string', enum: [...values] }, description);
export const nullable = (schema: Schema): Schema => ({ oneOf: [schema, { type: 'null' }] });
/** An object whose keys are not fixed (configuration, specs, tool inputs). */
export const anyObject = (description?: string): Schema =>
  described({ type: 'object', additionalProperties: true }, description);
/** Any JSON value. */
export const anyValue = (description?: string): Schema => described({}, description);

/** A loose object: listed properties, `required` by name. */
export const obj = (properties: Record<string, Schema>, required: string[] = [], description?: string): Schema => ({
  type: 'object',
  properties,
  ...(required.length > 0 ? { required } : {}),
  ...(description ? { description } : {}),
});

/** A property that may be absent (for `shape`). */
export class Optional {
  readonly optional = true;
  constructor(readonly schema: Schema) {}
}
export const opt = (schema: Schema): Optional => new Optional(schema);

/** The named keys of `T` (an index signature such as `[extra: string]: unknown` left out). */
type KnownKeys<T> = keyof {
  [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K];
};
type OptionalKeys<T> = { [K in KnownKeys<T>]-?: object extends Pick<T, K> ? K : never }[KnownKeys<T>];
type RequiredKeys<T> = Exclude<KnownKeys<T>, OptionalKeys<T>>;

/** Properties of `T`: each required field a schema, each optional one `opt(schema)`. */
export type ShapeOf<T> = { [K in RequiredKeys<T>]-?: Schema } & { [K in OptionalKeys<T>]-?: Optional };

/**
 * The schema of a contracts type. `open`: more fields than these may appear (types with an
 * index signature, records that keep what they were given).
 */
export function shape<T>(properties: ShapeOf<T>, options: { open?: boolean; description?: string } = {}): Schema {
  const props: Record<string, Schema> = {};
  const required: string[] = [];
  for (const [key, value] of Object.entries(properties as Record<string, Schema | Optional>)) {
    if (value instanceof Optional) props[key] = value.schema;
    else {
      props[key] = value;
      required.push(key);
    }
  }
  return {
    type: 'object',
    properties: props,
    ...(required.length > 0 ? { required } : {}),
    ...(options.open ? { additionalProperties: true } : {}),
    ...(options.description ? { description: options.description } : {}),
  };
}

/** Named schemas, put under `components.schemas` of the document. */
export const COMPONENTS = new Map<string, Schema>();

/** Registers `schema` as a component and answers a `$ref` to it. */
export function component(name: string, schema: Schema): Schema {
  if (COMPONENTS.has(name)) throw new Error(`OpenAPI component ${name} is defined twice`);
  COMPONENTS.set(name, schema);
  return { $ref: `#/components/schemas/${name}` };
}
