import { strict as assert } from 'node:assert';
import {
  ServersViewTree,
  type RefreshPlan,
  type RowElement,
} from '../../src/fronts/vscode/serversView/serversViewTree';
import type { NodeRow, ServerRow } from '../../src/fronts/vscode/serversView/serversViewModel';

const node = (server: string, index: number, description = 'gpu · ready'): NodeRow => ({
  kind: 'node',
  serverName: server,
  id: `${server}/node/${index}`,
  label: `rank ${index}`,
  description,
  tooltip: `rank ${index} of ${server}`,
  icon: 'check',
});
const server = (name: string, description = 'ready · up 1m', extra: Partial<ServerRow> = {}): ServerRow => ({
  kind: 'server',
  serverName: name,
  id: `server/${name}`,
  label: name,
  description,
  tooltip: `${name} on gpu1`,
  icon: 'check',
  contextValue: 'kimiServer.watching',
  nodes: [],
  ...extra,
});
const ids = (plan: RefreshPlan) => (plan.kind === 'rows' ? plan.elements.map((e) => e.id) : plan.kind);

describe('servers view tree: stable elements, refreshes of only the changed rows', () => {
  it('a row keeps the same element object across updates, carrying only { serverName }', () => {
    const tree = new ServersViewTree();
    tree.update([server('a'), server('b', 'failed', { nodes: [node('b', 0)] })]);
    const [a, b] = tree.roots();
    const [b0] = tree.children(b!);
    tree.update([server('a', 'ready · up 2m'), server('b', 'loading 5%', { nodes: [node('b', 0, 'gpu · loading')] })]);
    assert.equal(tree.roots()[0], a, 'the same object, not an equal one');
    assert.equal(tree.roots()[1], b);
    assert.equal(tree.children(b!)[0], b0);
    assert.deepEqual({ ...a! }, { kind: 'server', id: 'server/a', serverName: 'a' });
    assert.equal(b0!.serverName, 'b', "a node's commands act on its server");
    assert.equal(tree.row(a!)?.description, 'ready · up 2m', 'the words are the latest rows');
    assert.ok(Object.isFrozen(a));
  });

  it('the clock moving one row: only that row is refreshed; nothing moving: nothing is', () => {
    const tree = new ServersViewTree();
    assert.equal(ids(tree.update([server('a'), server('b', 'failed')])), 'root', 'the first rows');
    const plan = tree.update([server('a', 'ready · up 2m'), server('b', 'failed')]);
    assert.deepEqual(ids(plan), ['server/a']);
    assert.equal(plan.kind === 'rows' ? plan.elements[0] : undefined, tree.roots()[0]);
    assert.equal(ids(tree.update([server('a', 'ready · up 2m'), server('b', 'failed')])), 'none');
  });

  it('a change of label, tooltip, icon or menu is a change of the row', () => {
    const base = () => [server('a'), server('b')];
    const changes: Partial<ServerRow>[] = [
      { label: 'b (active)' },
      { tooltip: 'other' },
      { icon: 'error' },
      { contextValue: 'kimiServer.active.watching' },
    ];
    for (const change of changes) {
      const tree = new ServersViewTree();
      tree.update(base());
      assert.deepEqual(
        ids(tree.update([server('a'), server('b', 'ready · up 1m', change)])),
        ['server/b'],
        JSON.stringify(change),
      );
    }
  });

  it("a node's words: only the node; nodes coming or going: their server, asked again with its children", () => {
    const tree = new ServersViewTree();
    tree.update([server('mn', 'loading', { nodes: [node('mn', 0), node('mn', 1)] })]);
    const nodeMoved = tree.update([server('mn', 'loading', { nodes: [node('mn', 0), node('mn', 1, 'gpu · failed')] })]);
    assert.deepEqual(ids(nodeMoved), ['mn/node/1']);
    assert.deepEqual(ids(tree.update([server('mn', 'loading', { nodes: [node('mn', 0)] })])), ['server/mn']);
    assert.deepEqual(
      tree.children(tree.roots()[0]!).map((e) => e.id),
      ['mn/node/0'],
    );
  });

  it('servers coming, going or moving: the whole tree; a gone row has no words and a new element if it comes back', () => {
    const tree = new ServersViewTree();
    tree.update([server('a'), server('b')]);
    const [a, b] = tree.roots() as [RowElement, RowElement];
    assert.equal(ids(tree.update([server('b'), server('a')])), 'root', 'reordered');
    assert.equal(ids(tree.update([server('b')])), 'root', 'removed');
    assert.equal(tree.row(a), undefined);
    assert.deepEqual(tree.children(a), []);
    assert.equal(tree.roots()[0], b);
    assert.equal(ids(tree.update([server('b'), server('a')])), 'root', 'added');
    assert.notEqual(tree.roots()[1], a, 'a new row of the same name is a new element');
  });
});
