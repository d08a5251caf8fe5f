/**
 * The servers view's elements and what a change of its rows refreshes. Pure.
 *
 * VS Code's extension host maps a row's handle back to the element it was given, and a refresh of
 * the whole tree (`onDidChangeTreeData` with no element) empties that map until the workbench asks
 * for the rows again: a command chosen from a row's menu in between receives no row. So the
 * elements are stable (one object per row id, kept across updates, carrying only what commands
 * read: `{ serverName }`), the rows' words live beside them, and an update names the rows whose
 * words changed; the whole tree is refreshed only when the list of servers itself changed.
 */
import type { NodeRow, ServerRow, ServersViewRow } from './serversViewModel';

/** What the tree holds and a command run from a row receives: the contract's `{ serverName }`. */
export interface RowElement {
  readonly kind: 'server' | 'node';
  readonly id: string;
  readonly serverName: string;
}

/** What to tell the tree after an update: all of it, some rows, or nothing. */
export type RefreshPlan =
  | { readonly kind: 'root' }
  | { readonly kind: 'rows'; readonly elements: readonly RowElement[] }
  | { readonly kind: 'none' };

function sameWords(a: ServersViewRow, b: ServersViewRow): boolean {
  if (a.label !== b.label || a.description !== b.description || a.tooltip !== b.tooltip || a.icon !== b.icon)
    return false;
  if (a.kind === 'server' && b.kind === 'server') return a.contextValue === b.contextValue;
  return a.kind === b.kind;
}

function sameIds(a: readonly { id: string }[], b: readonly { id: string }[]): boolean {
  return a.length === b.length && a.every((row, i) => row.id === b[i]!.id);
}

export class ServersViewTree {
  private servers: readonly ServerRow[] = [];
  private readonly rows = new Map<string, ServersViewRow>();
  private readonly elements = new Map<string, RowElement>();

  /** Takes the rows now shown; says which of the elements the tree has to ask about again. */
  update(servers: readonly ServerRow[]): RefreshPlan {
    const before = this.servers;
    const previous = new Map(this.rows);
    this.servers = servers;
    this.rows.clear();
    for (const server of servers) {
      this.rows.set(server.id, server);
      for (const node of server.nodes) this.rows.set(node.id, node);
    }
    for (const id of [...this.elements.keys()]) if (!this.rows.has(id)) this.elements.delete(id);
    if (!sameIds(before, servers)) return { kind: 'root' };
    const changed: RowElement[] = [];
    for (const server of servers) {
      const old = previous.get(server.id);
      const nodesCame = old?.kind !== 'server' || !sameIds(old.nodes, server.nodes);
      if (nodesCame || !sameWords(old, server)) changed.push(this.element(server));
      // A server whose nodes came or went is asked again with its children.
      if (nodesCame) continue;
      for (const node of server.nodes) {
        const oldNode = previous.get(node.id);
        if (!oldNode || !sameWords(oldNode, node)) changed.push(this.element(node));
      }
    }
    return changed.length > 0 ? { kind: 'rows', elements: changed } : { kind: 'none' };
  }

  /** The top-level elements, in the order of the rows. */
  roots(): RowElement[] {
    return this.servers.map((server) => this.element(server));
  }

  /** The children of an element: a server's nodes (none for a node or a row no longer shown). */
  children(element: RowElement): RowElement[] {
    const row = this.rows.get(element.id);
    return row?.kind === 'server' ? row.nodes.map((node) => this.element(node)) : [];
  }

  /** The words of the row an element stands for now, or undefined once it is gone. */
  row(element: RowElement): ServersViewRow | undefined {
    return this.rows.get(element.id);
  }

  /** The one element of a row: the same object for as long as the row is shown. */
  private element(row: ServerRow | NodeRow): RowElement {
    const known = this.elements.get(row.id);
    if (known && known.kind === row.kind && known.serverName === row.serverName) return known;
    const element: RowElement = Object.freeze({ kind: row.kind, id: row.id, serverName: row.serverName });
    this.elements.set(row.id, element);
    return element;
  }
}
