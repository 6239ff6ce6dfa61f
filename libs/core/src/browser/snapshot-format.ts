import type { AxNode } from './browser-engine.port.js';

/** Roles a person acts on: never pruned. */
const INTERACTIVE_ROLES = new Set([
  'button',
  'link',
  'textbox',
  'searchbox',
  'combobox',
  'listbox',
  'option',
  'checkbox',
  'radio',
  'switch',
  'slider',
  'spinbutton',
  'menuitem',
  'menuitemcheckbox',
  'menuitemradio',
  'tab',
  'treeitem',
  'gridcell',
  'columnheader',
  'rowheader',
]);

/** Roles that give a page its shape: never pruned. */
const STRUCTURAL_ROLES = new Set([
  'heading',
  'img',
  'image',
  'figure',
  'table',
  'list',
  'listitem',
  'banner',
  'complementary',
  'contentinfo',
  'main',
  'navigation',
  'region',
  'form',
  'search',
  'dialog',
  'alertdialog',
  'alert',
  'status',
  'tooltip',
  'progressbar',
  'meter',
]);

export interface FormattedSnapshot {
  /** `# Page: <title>`, `URL: <url>`, a blank line, then one line per kept node. */
  text: string;
  /** uid → backend DOM node id, for the element-addressing tools. */
  uids: Map<string, number>;
  /** How many nodes got a uid. */
  count: number;
}

interface Printed {
  role: string;
  name: string;
  backendNodeId: number | null;
  properties: AxNode['properties'];
  children: Printed[];
}

/**
 * The text of an accessibility snapshot (docs/api/ai-browser.md, "Snapshots"): uids
 * `snap_<N>_<i>` (N the snapshot's number, i the node's index in it), two spaces of indent per
 * depth, flags after the name. Without `verbose`, ignored nodes and unnamed generic
 * containers give way to their children (one child is hoisted, several are wrapped in a group).
 */
export function formatSnapshot(
  nodes: AxNode[],
  page: { title: string; url: string },
  snapshotNumber: number,
  verbose: boolean,
): FormattedSnapshot {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const root = nodes[0];
  const tree = root ? build(root, byId, verbose, new Set()) : [];
  const lines: string[] = [];
  const uids = new Map<string, number>();
  let index = 0;
  const print = (node: Printed, depth: number): void => {
    const uid = `snap_${snapshotNumber}_${index++}`;
    if (node.backendNodeId !== null) uids.set(uid, node.backendNodeId);
    lines.push(
      `${'  '.repeat(depth)}uid=${uid} ${node.role} "${oneLine(node.name)}"${flags(node.properties, verbose)}`,
    );
    for (const child of node.children) print(child, depth + 1);
  };
  for (const node of tree) print(node, 0);
  return { text: [`# Page: ${page.title}`, `URL: ${page.url}`, '', ...lines].join('\n'), uids, count: index };
}

/** The nodes that stand for `node` in the printed tree: itself, or (pruned) what replaces it. */
function build(node: AxNode, byId: Map<string, AxNode>, verbose: boolean, seen: Set<string>): Printed[] {
  if (seen.has(node.id)) return []; // a malformed tree must not loop
  seen.add(node.id);
  const children = node.childIds.flatMap((id) => {
    const child = byId.get(id);
    return child ? build(child, byId, verbose, seen) : [];
  });
  const role = node.ignored || node.role === 'none' ? 'ignored' : node.role;
  if (!verbose && prunable(node)) {
    if (children.length <= 1) return children;
    return [{ role: 'group', name: '', backendNodeId: null, properties: {}, children }];
  }
  return [{ role, name: node.name, backendNodeId: node.backendNodeId, properties: node.properties, children }];
}

function prunable(node: AxNode): boolean {
  if (node.ignored || node.role === 'none') return true;
  if (INTERACTIVE_ROLES.has(node.role) || STRUCTURAL_ROLES.has(node.role)) return false;
  return (node.role === 'generic' || node.role === 'GenericContainer') && node.name === '';
}

function flags(p: AxNode['properties'], verbose: boolean): string {
  const out: string[] = [];
  if (p.disabled !== undefined) out.push(p.disabled ? 'disableable disabled' : 'disableable');
  if (p.expanded !== undefined) out.push(p.expanded ? 'expandable expanded' : 'expandable');
  if (p.focusable !== undefined || p.focused !== undefined) out.push(p.focused ? 'focusable focused' : 'focusable');
  if (p.selected !== undefined) out.push(p.selected ? 'selectable selected' : 'selectable');
  if (p.checked === true) out.push('checked');
  else if (p.checked === 'mixed') out.push('checked="mixed"');
  if (p.required) out.push('required');
  if (p.value !== undefined && p.value !== '') out.push(`value="${oneLine(p.value)}"`);
  if (p.level !== undefined) out.push(`level="${p.level}"`);
  if (verbose && p.description) out.push(`description="${oneLine(p.description)}"`);
  return out.length === 0 ? '' : ` ${out.join(' ')}`;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replace(/"/g, '\\"');
}
