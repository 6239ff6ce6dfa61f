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
