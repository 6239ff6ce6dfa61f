import type {
  CategoryDto,
  CategoryTaxonomyDto,
  DiscoverPageDto,
  RegistrySourceDto,
  StoreDetailDto,
  StoreListingDto,
  StoreQueryResultDto,
  UpdateItemDto,
} from '#contracts/store.js';
import { STORE_ENTRY_TYPES } from '#contracts/store.js';
import type { AppDto } from '#contracts/apps.js';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, q } from './api.js';
import { checkedSettings, initialValues, SettingsFields, settingsOf, translationFor } from './apps.js';
import { confirmAction, SubmitOrCancel } from './dialogs.js';
import { Markdown } from './chat.js';
import { hasStoreIcon, StoreKeywordIcon } from './icons.js';
import { AppNeeds } from './needs.js';
import { go, href } from './route.js';
import type { Space } from './spaces.js';

/** A Store operation this server does not offer answers 404: said plainly instead of failing. */
const unavailable = (err: unknown): boolean => (err as ApiError).status === 404;

/** The Store: browse and search by type, detail with the app document, install, updates, sources. */
export function StoreScreen(props: { space: Space }) {
  const [search, setSearch] = useState('');
  const [type, setType] = useState('');
  const [category, setCategory] = useState('');
  const [taxonomy, setTaxonomy] = useState<CategoryTaxonomyDto | null>(null);
  const [discover, setDiscover] = useState<DiscoverPageDto | null>(null);
  const [result, setResult] = useState<StoreQueryResultDto | null>(null);
  const [missing, setMissing] = useState(false);
  const [status, setStatus] = useState('');
  const [detail, setDetail] = useState<{ data: StoreDetailDto; doc: string | null } | null>(null);
  const [sources, setSources] = useState<RegistrySourceDto[]>([]);
  const [updates, setUpdates] = useState<UpdateItemDto[]>([]);
  const [url, setUrl] = useState('');
  const [installing, setInstalling] = useState(false);
  const detailTitle = useRef<HTMLHeadingElement>(null);
  const [installed, setInstalled] = useState<AppDto[]>([]);
  const entryCard = (item: StoreListingDto) => (
    <StoreCard
      item={item}
      category={categoryLabel(item.category)}
      installedAs={installedAs(installed, item, props.space)}
      onOpen={() => void open(item.slug)}
      onInstall={() => void open(item.slug, true)}
    />
  );
  const categoryLabel = (id: string): string =>
    Object.values(taxonomy ?? {})
      .flat()
      .find((c) => c.id === id)?.label ?? id;

  const fail = (err: unknown) => (unavailable(err) ? setMissing(true) : setStatus((err as ApiError).message));
  const loadSources = () => api.get<RegistrySourceDto[]>('/api/store/registries').then(setSources, fail);
  useEffect(() => {
    void loadSources();
    void api.get<AppDto[]>('/api/apps').then(setInstalled, () => undefined);
    void api.get<UpdateItemDto[]>('/api/store/updates').then(setUpdates, () => undefined);
    void api.get<CategoryTaxonomyDto>('/api/store/category-taxonomy').then(setTaxonomy, () => undefined);
    void api
      .get<DiscoverPageDto>(`/api/store/discover-page?pageSize=12&locale=${q(navigator.language)}`)
      .then(setDiscover, () => undefined);
  }, []);
  useEffect(() => {
    const timer = setTimeout(
      () =>
        void api
          .post<StoreQueryResultDto>('/api/store/query', {
            search: search || undefined,
            type: type || undefined,
            category: category || undefined,
            locale: navigator.language,
            pageSize: 50,
          })
          .then(setResult, fail),
      150,
    );
    return () => clearTimeout(timer);
  }, [search, type, category]);
  const categories: CategoryDto[] = taxonomy ? (type && taxonomy[type]) || taxonomy.default || [] : [];
  const browsing = !search && !type && !category;

  if (missing) {
    return (
      <section class="panel stack" aria-labelledby="store-title">
        <h1 id="store-title">Store</h1>
        <p role="status">
          This server does not offer the Store yet. Digital humans can still be installed from a spec file.
        </p>
      </section>
    );
  }

  async function open(slug: string, install = false) {
    // The previous entry goes first: its Install… must not be clicked while the new one loads.
    setDetail(null);
    try {
      const data = await api.get<StoreDetailDto>(`/api/store/apps/${encodeURIComponent(slug)}`);
      const doc = await api.get<{ content: string | null }>(`/api/store/app-document?slug=${q(slug)}`).then(
        (d) => d.content,
        () => null,
      );
      setDetail({ data, doc });
      setInstalling(install);
      // The details may be out of view (below the cards on a phone, above a scrolled list): bring them, and focus, there.
      requestAnimationFrame(() => detailTitle.current?.focus());
    } catch (err) {
      fail(err);
    }
  }

  return (
    <div class="split store-layout">
      <section class="panel stack" aria-labelledby="store-title">
        <h1 id="store-title">Store</h1>
        <label for="store-search">Search the Store</label>
        <input id="store-search" type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
        <label for="store-type">Type</label>
        <select id="store-type" value={type} onChange={(e) => setType(e.currentTarget.value)}>
          <option value="">All types</option>
          {STORE_ENTRY_TYPES.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
        <label for="store-category">Category</label>
        <select id="store-category" value={category} onChange={(e) => setCategory(e.currentTarget.value)}>
          <option value="">All categories</option>
          {categories.map((c) => (
            <option key={c.id} value={c.id}>
              {c.icon ? `${c.icon} ` : ''}
              {c.label}
            </option>
          ))}
        </select>
        {categories.length > 0 && (
          <div class="row" role="group" aria-label="Categories">
            {categories.map((c) => (
              <button
                key={c.id}
                type="button"
                class={category === c.id ? 'primary chip' : 'chip'}
                aria-pressed={category === c.id}
                onClick={() => setCategory(category === c.id ? '' : c.id)}
              >
                {c.label}
              </button>
            ))}
          </div>
        )}
        {result?.sources
          .filter((s) => s.status === 'error')
          .map((s) => (
            <p key={s.registryId} class="error">
              A source could not be read: {s.error}
            </p>
          ))}
        {browsing &&
          discover?.nodes
            .filter((n) => (n.entries?.length ?? 0) > 0 && n.type !== 'catalog')
            .map((n, i) => (
              <section key={i} class="stack" aria-label={n.title ?? 'Featured'}>
                <h2>{n.title ?? 'Featured'}</h2>
                {n.subtitle && <p class="muted">{n.subtitle}</p>}
                <ul class="plain store-cards" aria-label={n.title ?? 'Featured'}>
                  {n.entries!.map((item) => (
                    <li key={`${item.registryId}/${item.slug}`} class="store-card">
                      {entryCard(item)}
                    </li>
                  ))}
                </ul>
              </section>
            ))}
        <h2>{browsing ? 'All entries' : 'Results'}</h2>
        <p class="muted" aria-live="polite">
          {result ? `${result.total} found` : 'Loading…'}
        </p>
        <ul class="plain store-cards" aria-label="Store entries">
          {result && result.items.length === 0 && <li class="muted">Nothing found.</li>}
          {result?.items.map((item) => (
            <li key={`${item.registryId}/${item.slug}`} class="store-card">
              {entryCard(item)}
            </li>
          ))}
        </ul>
        <h2>Sources</h2>
        <ul class="plain list stack" aria-label="Store sources">
          {sources.map((s) => (
            <li key={s.id} class="row">
              <label class="row grow">
                <input
                  type="checkbox"
                  checked={s.enabled}
                  onChange={(e) =>
                    void api
                      .post(`/api/store/registries/${s.id}/toggle`, { enabled: e.currentTarget.checked })
                      .then(loadSources, fail)
                  }
                />
                {s.name} <span class="muted">{s.url}</span>
              </label>
              {!s.isDefault && (
                <button
                  class="danger"
                  onClick={async () => {
                    if (await confirmAction(`Remove the source ${s.name}?`, 'Remove'))
                      await api.del(`/api/store/registries/${s.id}`).then(loadSources, fail);
                  }}
                >
                  Remove
                </button>
              )}
            </li>
          ))}
        </ul>
        <form
          class="row"
          onSubmit={async (e) => {
            e.preventDefault();
            await api.post('/api/store/registries', { name: new URL(url).host, url }).then(() => setUrl(''), fail);
            await loadSources();
          }}
        >
          <label for="source-url">Add a source (URL)</label>
          <input id="source-url" type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
          <button type="submit">Add</button>
        </form>
        {updates.length > 0 && (
          <>
            <h2>Updates</h2>
            <ul class="plain list" aria-label="Updates">
              {updates.map((u) => (
                <li key={u.appId} class="row">
                  <span class="grow">
                    {u.entry?.name ?? u.appId}: {u.currentVersion} → {u.latestVersion}
                  </span>
                  <button
                    onClick={() =>
                      void api
                        .post<{ kept: unknown }>(`/api/store/updates/${u.appId}/apply`, {})
                        .then((r) => setStatus(`Updated; kept: ${JSON.stringify(r.kept)}`), fail)
                    }
                  >
                    Update
                  </button>
                </li>
              ))}
            </ul>
          </>
        )}
        <p role="status" class="muted">
          {status}
        </p>
      </section>
      <section class="panel stack" aria-label="Store entry">
        {detail ? (
          <>
            <h2 ref={detailTitle} tabIndex={-1}>
              {translationFor(detail.data.spec)?.name ?? detail.data.entry.display_name ?? detail.data.entry.name}
            </h2>
            <p class="muted">
              {detail.data.entry.type} · {detail.data.entry.version} · {detail.data.entry.author}
            </p>
            <p>{translationFor(detail.data.spec)?.description ?? detail.data.entry.description}</p>
            <AppNeeds
              key={detail.data.entry.slug}
              spec={detail.data.spec}
              listed={detail.data.entry.requires_mcps}
              spaceId={props.space.id}
            />
            {installing ? (
              <InstallForm
                key={detail.data.entry.slug}
                detail={detail.data}
                space={props.space}
                onCancel={() => setInstalling(false)}
              />
            ) : (
              <button class="primary" onClick={() => setInstalling(true)}>
                Install…
              </button>
            )}
            {detail.doc && <Markdown text={detail.doc} />}
          </>
        ) : (
          <p class="muted">Choose an entry to see its details.</p>
        )}
      </section>
    </div>
  );
}

/**
 * Whether the page may show a picture icon: the page's CSP (`img-src 'self' blob: data:`) blocks
 * pictures from other sites, so only a `data:image/` URL or one on this server's own origin is shown.
 */
function showableIcon(icon: string): boolean {
  if (/^data:image\//i.test(icon)) return true;
  if (!/^https?:/i.test(icon)) return false;
  try {
    return new URL(icon).origin === location.origin;
  } catch {
    return false;
  }
}

/**
 * Catalog icons are keywords (`news`, `dev`…) or a picture's URL; anything else, a picture the
 * page may not load (another site's) and one that fails to load get a letter avatar.
 */
function StoreIcon(props: { icon?: string; name: string }) {
  const icon = props.icon?.trim() ?? '';
  const [broken, setBroken] = useState(false);
  const letter = (
    <span class="store-icon letter" aria-hidden="true">
      {(props.name.trim()[0] ?? '?').toUpperCase()}
    </span>
  );
  if (/^(https?:|data:)/i.test(icon))
    return showableIcon(icon) && !broken ? (
      <img class="store-icon" src={icon} alt="" loading="lazy" onError={() => setBroken(true)} />
    ) : (
      letter
    );
  const keyword = icon.toLowerCase();
  return hasStoreIcon(keyword) ? (
    <span class="store-icon" aria-hidden="true">
      <StoreKeywordIcon keyword={keyword} />
    </span>
  ) : (
    letter
  );
}

/**
 * The app this entry is installed as in the space (or for every space): the server's own rule for
 * "already installed" (the same author and name, case aside). The listing's name may be a
 * translation, so the spec's translated names count too.
 */
function installedAs(apps: AppDto[], item: StoreListingDto, space: Space): AppDto | undefined {
  const identity = (author: unknown, name: unknown) =>
    `${String(author ?? '')
      .trim()
      .toLowerCase()}/${String(name ?? '')
      .trim()
      .toLowerCase()}`;
  const wanted = identity(item.author, item.name);
  return apps.find((a) => {
    if (a.spaceId !== space.id && a.spaceId !== null) return false;
    const translations = Object.values((a.spec.i18n ?? {}) as Record<string, { name?: unknown }>);
    return [a.spec.name, ...translations.map((t) => t?.name)].some((name) => identity(a.spec.author, name) === wanted);
  });
}

/** One Store entry as a card: icon, name (opens its details), type and category, author and version, description, Install. */
function StoreCard(props: {
  item: StoreListingDto;
  category: string;
  installedAs: AppDto | undefined;
  onOpen: () => void;
  onInstall: () => void;
}) {
  const { item } = props;
  const translated = translationFor(item as unknown as Record<string, unknown>);
  const name = item.display_name ?? translated?.name ?? item.name;
  return (
    <>
      <div class="row store-card-head">
        <StoreIcon icon={item.icon} name={name} />
        <div class="grow">
          <button class="link store-card-name" onClick={props.onOpen}>
            {name}
          </button>
          <p class="muted store-card-meta">
            <span class="badge">{item.type}</span> {props.category}
          </p>
        </div>
      </div>
      <p class="store-card-description">{translated?.description ?? item.description}</p>
      <div class="row store-card-foot">
        <span class="muted grow">
          {item.author} · v{item.version}
        </span>
        {props.installedAs ? (
          <>
            <span class="badge ok">Installed</span>
            <a href={href('apps', props.installedAs.id)} aria-label={`Open ${name}`}>
              Open
            </a>
          </>
        ) : (
          <button aria-label={`Install ${name}…`} onClick={props.onInstall}>
            Install…
          </button>
        )}
      </div>
    </>
  );
}

/** Installing a Store entry: its settings form (from the spec's `config_schema`) first, then the install. */
function InstallForm(props: { detail: StoreDetailDto; space: Space; onCancel: () => void }) {
  const schema = settingsOf(props.detail.spec);
  const [values, setValues] = useState<Record<string, unknown>>(() => initialValues(schema));
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="stack"
      aria-label="Install with settings"
      onSubmit={async (e) => {
        e.preventDefault();
        const checked = checkedSettings(schema, values);
        if (!checked.ok) return setStatus(checked.error);
        setBusy(true);
        setStatus('Installing…');
        try {
          const { appId } = await api.post<{ appId: string }>('/api/store/install', {
            slug: props.detail.entry.slug,
            spaceId: props.space.id,
            userConfig: checked.values,
          });
          go('apps', appId);
        } catch (err) {
          setStatus((err as ApiError).message);
        } finally {
          setBusy(false);
        }
      }}
    >
      {schema.length > 0 ? (
        <fieldset class="stack">
          <legend>Settings</legend>
          <SettingsFields
            schema={schema}
            values={values}
            set={(key, value) => setValues({ ...values, [key]: value })}
          />
        </fieldset>
      ) : (
        <p class="muted">This entry has no settings.</p>
      )}
      <SubmitOrCancel disabled={busy} onCancel={props.onCancel}>
        Install in {props.space.name}
      </SubmitOrCancel>
      <p role="status" class="muted">
        {status}
      </p>
    </form>
  );
}
