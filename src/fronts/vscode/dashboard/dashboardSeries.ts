/**
 * What the load dashboard shows: the active server's load, its series of states over time,
 * the last load's breakdown and the parser verification. Fires when any of it may have changed.
 */
import * as vscode from 'vscode';
import type { FleetVerbs } from '../../../fleet/fleetVerbs';
import type { LoadState } from '../../../monitor/state/loadStateTypes';
import { dashboardModel, LoadSeries, type DashboardModel } from './dashboardModel';
import { Disposable } from '../../../util/disposable';
import type { SettingsState } from '../settings/settingsState';

export class DashboardSeries extends Disposable {
  private readonly series = new Map<string, LoadSeries>();
  private readonly changed = this._register(new vscode.EventEmitter<void>());
  /** Fires when anything the dashboard shows may have changed. */
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly fleet: FleetVerbs,
    private readonly settings: SettingsState,
  ) {
    super();
  }

  observe(name: string, state: LoadState): void {
    this.seriesFor(name).observe(state, Date.now());
    this.changed.fire();
  }

  /** Something else the dashboard shows changed (a verification). */
  touch(): void {
    this.changed.fire();
  }

  model(): DashboardModel {
    const server = this.settings.activeServer();
    const snapshot = server ? this.fleet.snapshot(server) : undefined;
    return dashboardModel({
      server: server?.name,
      state: snapshot?.state,
      ...(snapshot?.lastLoad ? { lastLoad: snapshot.lastLoad } : {}),
      series: server ? this.seriesFor(server.name).points() : [],
      // The summary, then the same table the log shows.
      verification:
        snapshot?.verificationTable !== undefined
          ? `${snapshot.verification ?? ''}\n\n${snapshot.verificationTable}`
          : snapshot?.verification,
      now: Date.now(),
    });
  }

  private seriesFor(name: string): LoadSeries {
    let series = this.series.get(name);
    if (!series) {
      series = new LoadSeries();
      this.series.set(name, series);
    }
    return series;
  }
}
