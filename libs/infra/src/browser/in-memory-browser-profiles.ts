import { BrowserProfiles, type BrowserStorageState } from '#core/browser/ai-browser.js';

/**
 * Browser profiles in this process's memory, merged newest-wins per cookie (name, domain,
 * path) and per origin: a stand-in until the encrypted database store binds BrowserProfiles
 * (profiles are lost at restart and not shared between replicas).
 */
export class InMemoryBrowserProfiles extends BrowserProfiles {
  private readonly states = new Map<string, BrowserStorageState>();

  async load(profile: string): Promise<BrowserStorageState | null> {
    const state = this.states.get(profile);
    return state ? structuredClone(state) : null;
  }

  async save(profile: string, state: BrowserStorageState): Promise<void> {
    const stored = this.states.get(profile) ?? { cookies: [], origins: [] };
    const cookies = new Map(stored.cookies.map((c) => [`${c.name}|${c.domain}|${c.path}`, c]));
    for (const c of state.cookies) cookies.set(`${c.name}|${c.domain}|${c.path}`, c);
    const origins = new Map(stored.origins.map((o) => [o.origin, o]));
    for (const o of state.origins) origins.set(o.origin, o);
    this.states.set(profile, structuredClone({ cookies: [...cookies.values()], origins: [...origins.values()] }));
  }

  async cookieDomains(profile: string): Promise<string[]> {
    return [...new Set((this.states.get(profile)?.cookies ?? []).map((c) => c.domain))].sort();
  }
}
