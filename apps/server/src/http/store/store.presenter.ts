import type { RegistrySourceDto } from '#contracts/store.js';
import type { RegistrySource } from '#core/ports/store.repository.port.js';

/** A source as listed: `adapterConfig` as stored (the spec lists it; the response is to be treated as secret). */
export function toRegistrySourceDto(s: RegistrySource): RegistrySourceDto {
  return {
    id: s.id,
    name: s.name,
    url: s.url,
    enabled: s.enabled,
    isDefault: s.isDefault,
    ...(s.sourceType ? { sourceType: s.sourceType } : {}),
    ...(s.adapterConfig ? { adapterConfig: s.adapterConfig } : {}),
  };
}
