/** Small inline icons (no icon font, no emoji: they render the same everywhere). Decorative: hidden from assistive technology. */
const frame = { width: 16, height: 16, viewBox: '0 0 16 16', 'aria-hidden': true as const, class: 'icon' };

export const FolderIcon = (props: { open?: boolean }) => (
  <svg {...frame}>
    <path
      d={props.open ? 'M1 4h5l1.5 1.5H15v1H4L1.5 13H1z M4 7h11.5L13 13H1.5z' : 'M1 3h5l1.5 1.5H15V13H1z'}
      fill="currentColor"
      opacity=".75"
    />
  </svg>
);

export const FileIcon = () => (
  <svg {...frame}>
    <path d="M3 1h6.5L13 4.5V15H3z M9 1v4h4" fill="none" stroke="currentColor" stroke-width="1.2" />
  </svg>
);

/** The Store catalog's icon keywords, drawn (24 px grid, one stroke): a keyword not here gets a letter avatar. */
const STORE_ICON_PATHS: Record<string, string> = {
  content: 'M4 20h4L19 9l-4-4L4 16z M13 7l4 4',
  data: 'M4 20h16 M7 16v-5 M12 16V6 M17 16v-8',
  dev: 'M8 7l-5 5 5 5 M16 7l5 5-5 5 M14 4l-4 16',
  news: 'M4 5h13v14H6a2 2 0 0 1-2-2z M17 9h3v8a2 2 0 0 1-2 2 M7 9h7 M7 13h7 M7 16h4',
  productivity: 'M4 12l5 5L20 6',
  shopping: 'M5 8h14l-1.5 12h-11z M9 8V6a3 3 0 0 1 6 0v2',
  social: 'M4 5h16v11H10l-5 4v-4H4z',
};

export const hasStoreIcon = (keyword: string): boolean => keyword in STORE_ICON_PATHS;

export const StoreKeywordIcon = (props: { keyword: string }) => (
  <svg width={24} height={24} viewBox="0 0 24 24" aria-hidden="true">
    <path
      d={STORE_ICON_PATHS[props.keyword]}
      fill="none"
      stroke="currentColor"
      stroke-width="1.8"
      stroke-linecap="round"
      stroke-linejoin="round"
    />
  </svg>
);
