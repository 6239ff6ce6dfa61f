import { useEffect, useState } from 'preact/hooks';

/** Hash routes (`#/files`, `#/chat/<id>`…): the page's own path never changes, so relative URLs hold. */
export function useRoute(): string[] {
  const read = () => location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const [parts, setParts] = useState(read);
  useEffect(() => {
    const update = () => setParts(read());
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return parts;
}

export const href = (...parts: string[]): string => `#/${parts.map(encodeURIComponent).join('/')}`;
export const go = (...parts: string[]): void => {
  location.hash = href(...parts);
};
