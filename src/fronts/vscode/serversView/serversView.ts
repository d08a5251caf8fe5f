import * as vscode from 'vscode';
import type { FleetVerbs } from '../../../fleet/fleetVerbs';
import { serverRows } from './serversViewModel';
import { ServersViewTree, type RowElement } from './serversViewTree';
import { shownText } from '../output/shownText';

/** Fleet events come in bursts (a state per poll round per server): one refresh per burst. */
const REFRESH_DEBOUNCE_MS = 300;
/** Uptime and ETA move with the clock: looked at this often while the view is visible (rows whose words changed are refreshed). */
const CLOCK_REFRESH_MS = 15_000;

/**
 * The "Kimi Servers" tree: a thin shell over serversViewModel and serversViewTree. Its elements
 * are stable `{ serverName }` objects (the commands' contract), and a change refreshes only the
 * rows whose words changed: a refresh of the whole tree would leave a command chosen from a
 * row's menu meanwhile without its row.
 */
export class ServersView implements vscode.TreeDataProvider<RowElement>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<RowElement[] | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly view: vscode.TreeView<RowElement>;
  private readonly tree = new ServersViewTree();
  private debounce: NodeJS.Timeout | undefined;
  private clock: NodeJS.Timeout | undefined;

  constructor(
    private readonly fleet: FleetVerbs,
    private readonly activeName: () => string | undefined,
  ) {
    this.view = vscode.window.createTreeView('kimiService.servers', { treeDataProvider: this, showCollapseAll: false });
    this.disposables.push(
      this.view,
      this.changed,
      fleet.onEvent(() => this.refreshSoon()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('kimiService')) this.refreshSoon();
      }),
      this.view.onDidChangeVisibility(() => this.followClock()),
    );
    this.followClock();
  }

  getTreeItem(element: RowElement): vscode.TreeItem {
    const row = this.tree.row(element);
    if (!row) return Object.assign(new vscode.TreeItem(element.serverName), { id: element.id });
    const collapsible =
      row.kind === 'server' && row.nodes.length > 0
        ? vscode.TreeItemCollapsibleState.Expanded
        : vscode.TreeItemCollapsibleState.None;
    const item = new vscode.TreeItem(row.label, collapsible);
    item.id = row.id;
    item.description = shownText(row.description);
    item.tooltip = shownText(row.tooltip);
    item.iconPath = new vscode.ThemeIcon(row.icon);
    item.contextValue = row.kind === 'server' ? row.contextValue : 'kimiNode';
    return item;
  }

  getChildren(element?: RowElement): RowElement[] {
    if (element) return this.tree.children(element);
    // The whole tree is being asked again: whatever changed is shown by this answer.
    this.tree.update(this.currentRows());
    return this.tree.roots();
  }

  private currentRows() {
    return serverRows(this.fleet.snapshots(), this.activeName(), Date.now());
  }

  /** Tells the tree what changed since it last asked: the changed rows, or all when servers came or went. */
  private refresh(): void {
    const plan = this.tree.update(this.currentRows());
    if (plan.kind === 'root') this.changed.fire(undefined);
    if (plan.kind === 'rows') this.changed.fire([...plan.elements]);
  }

  private refreshSoon(): void {
    if (this.debounce) return;
    this.debounce = setTimeout(() => {
      this.debounce = undefined;
      this.refresh();
    }, REFRESH_DEBOUNCE_MS);
  }

  private followClock(): void {
    if (this.view.visible && !this.clock) this.clock = setInterval(() => this.refresh(), CLOCK_REFRESH_MS);
    if (!this.view.visible && this.clock) {
      clearInterval(this.clock);
      this.clock = undefined;
    }
  }

  dispose(): void {
    if (this.debounce) clearTimeout(this.debounce);
    if (this.clock) clearInterval(this.clock);
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
