import { type DynamicModule, type INestApplicationContext, Module, type Provider } from '@nestjs/common';
import { ApplicationConfig, ModuleRef, ModulesContainer } from '@nestjs/core';
import { API_CONTROLLERS } from './api.module.js';

/** Lifecycle hooks already run by the process's own container: hidden from this one. */
const HOOKS = new Set<PropertyKey>([
  'onModuleInit',
  'onApplicationBootstrap',
  'onModuleDestroy',
  'beforeApplicationShutdown',
  'onApplicationShutdown',
]);

/**
 * The API controllers of a worker-only process, for its assistant's listener alone: turns run
 * there, and their calls of the service's own API are answered by a private application on
 * 127.0.0.1 built over the process's container, so the process's own container holds no
 * controller. Its services are the process's own instances (no second copy of any state); their
 * lifecycle hooks stay with the process's container, which has already run them.
 */
@Module({})
export class AssistantRelayModule {
  static over(owner: INestApplicationContext): DynamicModule {
    const providers: Provider[] = [];
    const seen = new Set<unknown>();
    for (const module of owner.get(ModulesContainer, { strict: false }).values()) {
      if (module.metatype.name === 'InternalCoreModule') continue;
      for (const [token, wrapper] of module.providers) {
        if (seen.has(token) || token === module.metatype || token === ModuleRef || token === ApplicationConfig)
          continue;
        const instance: unknown = wrapper.instance;
        if (instance === undefined || instance === null) continue;
        seen.add(token);
        providers.push({ provide: token, useValue: typeof instance === 'object' ? withoutHooks(instance) : instance });
      }
    }
    return { module: AssistantRelayModule, controllers: API_CONTROLLERS, providers };
  }
}

/** The same object without its lifecycle hooks (so this container does not run them again). */
function withoutHooks<T extends object>(target: T): T {
  return new Proxy(target, {
    get(t, key) {
      if (HOOKS.has(key)) return undefined;
      const value: unknown = Reflect.get(t, key, t);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value;
    },
  });
}
