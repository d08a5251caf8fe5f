import * as vscode from 'vscode';
import type { FleetVerbs } from '../../../fleet/fleetVerbs';
import { serverRows, type ServersViewRow } from './serversViewModel';
import { shownText } from '../output/shownText';

/** Fleet events come in bursts (a state per poll round per server): one refresh per burst. */
const REFRESH_DEBOUNCE_MS = 300;
/** Uptime and ETA move with the clock: refreshed this often while the view is visible. */
const CLOCK_REFRESH_MS = 15_000;

/**
 * The "Kimi Servers" tree: a thin shell over serversViewModel. Rows are the model's objects,
 * so a command run from a row receives `{ serverName }` (the commands' contract).
 */
export class ServersView implements vscode.TreeDataProvider<ServersViewRow>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly view: vscode.TreeView<ServersViewRow>;
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

  getTreeItem(row: ServersViewRow): vscode.TreeItem {
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

  getChildren(row?: ServersViewRow): ServersViewRow[] {
    if (!row) return serverRows(this.fleet.snapshots(), this.activeName(), Date.now());
    return row.kind === 'server' ? [...row.nodes] : [];
  }

  private refreshSoon(): void {
    if (this.debounce) return;
    this.debounce = setTimeout(() => {
      this.debounce = undefined;
      this.changed.fire();
    }, REFRESH_DEBOUNCE_MS);
  }

  private followClock(): void {
    if (this.view.visible && !this.clock) this.clock = setInterval(() => this.changed.fire(), CLOCK_REFRESH_MS);
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
