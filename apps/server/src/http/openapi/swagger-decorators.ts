/**
 * The @nestjs/swagger decorators the controllers use, writing the metadata its scanner reads
 * exactly as the package's own do (same keys, same shapes; swagger-decorators.spec.ts compares
 * them), without loading the package with the server: its decorators import all of
 * es-toolkit/compat, about 530 modules of the start's ~1,300. The document itself
 * (openapi-document.ts) is built with @nestjs/swagger once the server listens.
 */

/** @nestjs/swagger's DECORATORS keys (its constants.js). */
export const SWAGGER_KEYS = {
  extension: 'swagger/apiExtension',
  tags: 'swagger/apiUseTags',
  operation: 'swagger/apiOperation',
  consumes: 'swagger/apiConsumes',
  parameters: 'swagger/apiParameters',
} as const;

type Decorator = (target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => void;

/** Where a class or method decorator keeps its metadata: the method itself, or the class. */
const holder = (target: object, descriptor?: PropertyDescriptor): object =>
  descriptor ? (descriptor.value as object) : target;

/** Appends to a list kept on the class or method (createMixedDecorator with a list). */
const appendList =
  (key: string, items: unknown[]): Decorator =>
  (target, _key, descriptor) => {
    const on = holder(target, descriptor);
    Reflect.defineMetadata(key, [...((Reflect.getMetadata(key, on) as unknown[] | undefined) ?? []), ...items], on);
  };

const defined = (value: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));

/** A shallow copy, as es-toolkit's `clone` makes of the values used here. */
const clone = (value: unknown): unknown =>
  Array.isArray(value) ? [...value] : typeof value === 'object' && value !== null ? { ...value } : value;

/** `@ApiExtension` on an operation: `x-…` fields of it in the document (of two with one key, the one applied first wins). */
export function ApiExtension(extensionKey: `x-${string}`, properties: unknown): MethodDecorator {
  return (_target, _key, descriptor) => {
    const on = descriptor.value as object;
    const previous = (Reflect.getMetadata(SWAGGER_KEYS.extension, on) as Record<string, unknown> | undefined) ?? {};
    Reflect.defineMetadata(SWAGGER_KEYS.extension, { [extensionKey]: clone(properties), ...previous }, on);
    return descriptor;
  };
}

/** `@ApiTags` on a controller or an operation. */
export const ApiTags = (...tags: string[]): ClassDecorator & MethodDecorator =>
  appendList(SWAGGER_KEYS.tags, tags) as ClassDecorator & MethodDecorator;

/** `@ApiConsumes` on a controller or an operation. */
export const ApiConsumes = (...mimeTypes: string[]): ClassDecorator & MethodDecorator =>
  appendList(SWAGGER_KEYS.consumes, mimeTypes) as ClassDecorator & MethodDecorator;

/** `@ApiOperation` on an operation: its summary and description. */
export function ApiOperation(options: { summary?: string; description?: string }): MethodDecorator {
  return (_target, _key, descriptor) => {
    const on = descriptor.value as object;
    const previous = Reflect.getMetadata(SWAGGER_KEYS.operation, on) as Record<string, unknown> | undefined;
    Reflect.defineMetadata(SWAGGER_KEYS.operation, { ...previous, ...defined({ summary: '', ...options }) }, on);
    return descriptor;
  };
}

/** `@ApiBody` on an operation, described by a schema (what the controllers use). */
export function ApiBody(options: {
  schema: Record<string, unknown>;
  description?: string;
  required?: boolean;
}): MethodDecorator {
  return (_target, _key, descriptor) => {
    const on = descriptor.value as object;
    const parameters = (Reflect.getMetadata(SWAGGER_KEYS.parameters, on) as unknown[] | undefined) ?? [];
    const body = { type: String, required: true, ...defined({ in: 'body', ...options }) };
    Reflect.defineMetadata(SWAGGER_KEYS.parameters, [...parameters, body], on);
    return descriptor;
  };
}
