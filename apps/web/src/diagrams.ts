// The diagrams chunk: Mermaid, loaded the first time a message holds a closed ```mermaid block.
import DOMPurify from 'dompurify';
import mermaid from 'mermaid';
import { setStyledHtml, withoutStyleAttributes } from './styled-html.js';

type Drawing = { svg: string } | { error: string };

/** Each diagram drawn once per source and theme (a streamed reply inserts it again on every token). */
const drawings = new Map<string, Promise<Drawing>>();
/** Mermaid keeps one configuration: drawings run one at a time. */
let queue: Promise<unknown> = Promise.resolve();
let drawingCount = 0;

/** The app's theme (docs/web-app.md): the one chosen in Settings, else the system's. */
function darkTheme(): boolean {
  const chosen = document.documentElement.dataset.theme;
  return chosen === 'dark' || (chosen !== 'light' && matchMedia('(prefers-color-scheme: dark)').matches);
}

/**
 * Runs Mermaid's drawing with its inline styles kept within the page's policy (docs/web-app.md):
 * Mermaid measures the diagram in a scratch element of the page, setting style attributes and
 * inserting a `<style>` element there, which `style-src 'self'` blocks and reports. Meanwhile a
 * style attribute is set through the CSSOM instead, and the `<style>` element's rules (scoped to
 * the diagram's id) become a stylesheet adopted by the document. Mermaid's own DOMPurify pass
 * over the drawn SVG still parses style attributes, which the browser reports as blocked (they
 * are applied again through the CSSOM by setStyledHtml, so nothing is lost).
 */
async function withStylesThroughCssom<T>(draw: () => Promise<T>): Promise<T> {
  const { setAttribute } = Element.prototype;
  const { insertBefore, appendChild } = Node.prototype;
  const adopt = (node: Node): boolean => {
    if (!(node instanceof HTMLStyleElement || node instanceof SVGStyleElement)) return false;
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(node.textContent ?? '');
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
    return true;
  };
  Element.prototype.setAttribute = function (this: Element, name: string, value: string) {
    if (name.toLowerCase() === 'style' && (this instanceof HTMLElement || this instanceof SVGElement)) {
      this.style.cssText = String(value);
    } else {
      setAttribute.call(this, name, value);
    }
  };
  Node.prototype.insertBefore = function <N extends Node>(this: Node, node: N, child: Node | null): N {
    return adopt(node) ? node : (insertBefore.call(this, node, child) as N);
  };
  Node.prototype.appendChild = function <N extends Node>(this: Node, node: N): N {
    return adopt(node) ? node : (appendChild.call(this, node) as N);
  };
  try {
    return await draw();
  } finally {
    Element.prototype.setAttribute = setAttribute;
    Node.prototype.insertBefore = insertBefore;
    Node.prototype.appendChild = appendChild;
  }
}

function draw(source: string, dark: boolean): Promise<Drawing> {
  const key = `${dark ? 'dark' : 'light'}\n${source}`;
  let drawing = drawings.get(key);
  if (!drawing) {
    drawing = queue.then(async (): Promise<Drawing> => {
      mermaid.initialize({
        startOnLoad: false,
        securityLevel: 'strict',
        theme: dark ? 'dark' : 'default',
        // SVG text labels: HTML labels would be foreignObject content with more inline styles.
        htmlLabels: false,
        flowchart: { htmlLabels: false },
        suppressErrorRendering: true,
      });
      try {
        const { svg } = await withStylesThroughCssom(() => mermaid.render(`diagram-${++drawingCount}`, source));
        return {
          svg: DOMPurify.sanitize(withoutStyleAttributes(svg), { USE_PROFILES: { svg: true, svgFilters: true } }),
        };
      } catch (err) {
        return { error: err instanceof Error ? err.message : String(err) };
      }
    });
    queue = drawing;
    drawings.set(key, drawing);
  }
  return drawing;
}

/** The diagram (or why it could not be drawn) above its source, which a toggle shows. */
function show(box: HTMLElement, source: HTMLPreElement, drawing: Drawing): void {
  const toggle = document.createElement('details');
  const summary = document.createElement('summary');
  summary.textContent = 'Diagram source';
  toggle.append(summary, source);
  if ('svg' in drawing) {
    const picture = document.createElement('div');
    picture.className = 'diagram-svg';
    setStyledHtml(picture, drawing.svg);
    box.replaceChildren(picture, toggle);
  } else {
    const message = document.createElement('p');
    message.className = 'diagram-error';
    message.textContent = 'This diagram could not be drawn:';
    const reason = document.createElement('pre');
    reason.className = 'diagram-error-reason';
    reason.textContent = drawing.error;
    toggle.open = true;
    box.replaceChildren(message, reason, toggle);
  }
}

/** Draws each closed ```mermaid block under `root` (see markdown.ts) as SVG, in the app's theme. */
export function drawDiagrams(root: ParentNode): void {
  for (const box of Array.from(root.querySelectorAll<HTMLElement>('.diagram[data-mermaid]:not([data-drawn])'))) {
    const source = box.querySelector('pre');
    if (!source) continue;
    box.dataset.drawn = '';
    void draw(source.querySelector('code')?.textContent ?? '', darkTheme()).then((drawing) =>
      show(box, source, drawing),
    );
  }
}
