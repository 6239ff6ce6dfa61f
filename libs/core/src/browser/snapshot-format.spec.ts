import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AxNode } from './browser-engine.port.js';
import { formatSnapshot } from './snapshot-format.js';

const node = (
  id: string,
  role: string,
  name: string,
  childIds: string[] = [],
  extra: Partial<AxNode> = {},
): AxNode => ({
  id,
  role,
  name,
  ignored: false,
  backendNodeId: Number(id),
  childIds,
  properties: {},
  ...extra,
});

describe('formatSnapshot', () => {
  const tree: AxNode[] = [
    node('1', 'RootWebArea', 'Shop', ['2', '3']),
    node('2', 'generic', '', ['4']),
    node('3', 'generic', '', ['5', '6']),
    node('4', 'heading', 'Cart', [], { properties: { level: 2 } }),
    node('5', 'textbox', 'Qty', [], { properties: { focusable: true, focused: true, required: true, value: '3' } }),
    node('6', 'none', '', ['7'], { ignored: true }),
    node('7', 'checkbox', 'Gift "wrap"', [], { properties: { checked: true, disabled: false } }),
  ];

  it('prints the header, uids snap_<N>_<i>, two spaces per depth and the flags; prunes unnamed generics', () => {
    const out = formatSnapshot(tree, { title: 'Shop', url: 'https://shop.example/cart' }, 7, false);
    assert.equal(
      out.text,
      [
        '# Page: Shop',
        'URL: https://shop.example/cart',
        '',
        'uid=snap_7_0 RootWebArea "Shop"',
        '  uid=snap_7_1 heading "Cart" level="2"',
        '  uid=snap_7_2 group ""',
        '    uid=snap_7_3 textbox "Qty" focusable focused required value="3"',
        '    uid=snap_7_4 checkbox "Gift \\"wrap\\"" disableable checked',
      ].join('\n'),
    );
    assert.equal(out.count, 5);
    assert.equal(out.uids.get('snap_7_1'), 4);
    assert.equal(out.uids.get('snap_7_4'), 7);
    assert.equal(out.uids.has('snap_7_2'), false, 'a synthetic group addresses nothing');
  });

  it('verbose keeps every node, ignored ones as "ignored", with descriptions', () => {
    const withDescription = tree.map((n) =>
      n.id === '4' ? { ...n, properties: { ...n.properties, description: 'Your items' } } : n,
    );
    const out = formatSnapshot(withDescription, { title: 'Shop', url: 'u' }, 1, true);
    const lines = out.text.split('\n').slice(3);
    assert.equal(lines.length, 7);
    assert.equal(lines[1], '  uid=snap_1_1 generic ""');
    assert.equal(lines[2], '    uid=snap_1_2 heading "Cart" level="2" description="Your items"');
    assert.equal(lines[5], '    uid=snap_1_5 ignored ""');
  });

  it('an empty tree gives the header only', () => {
    assert.equal(formatSnapshot([], { title: '', url: 'about:blank' }, 2, false).text, '# Page: \nURL: about:blank\n');
  });
});
