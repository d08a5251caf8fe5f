/**
 * The extension's settings: read from the `kimiService` configuration on first use and again at
 * each change of it, handed to the fleet, and their errors kept for the commands to say.
 */
import * as vscode from 'vscode';
import { activeProfile, type ServerProfile, type Settings } from '../../../config/config';
import type { FleetVerbs } from '../../../fleet/fleetVerbs';
import { Disposable } from '../../../util/disposable';
import { readKimiSettings, reportSettingsErrors } from './settingsSource';

export class SettingsState extends Disposable {
  private loaded: Settings | undefined;
  private loadedOnce = false;
  private loadErrors: readonly string[] = [];
  private readonly loadedEmitter = this._register(new vscode.EventEmitter<Settings | undefined>());
  /** Fires after each read of the settings (undefined: they are not valid). */
  readonly onDidLoad = this.loadedEmitter.event;

  constructor(
    private readonly fleet: FleetVerbs,
    private readonly log: vscode.LogOutputChannel,
  ) {
    super();
    this._register(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('kimiService')) this.load();
      }),
    );
  }

  /** The valid settings (read on first use), or undefined. */
  get settings(): Settings | undefined {
    if (!this.loadedOnce) this.load();
    return this.loaded;
  }

  /** Why the settings are not valid ([] when they are). */
  get errors(): readonly string[] {
    return this.loadErrors;
  }

  activeServer(): ServerProfile | undefined {
    const settings = this.settings;
    return settings ? activeProfile(settings) : undefined;
  }

  reportErrors(): void {
    reportSettingsErrors(this.loadErrors);
  }

  private load(): void {
    this.loadedOnce = true;
    const result = readKimiSettings();
    if (result.ok) {
      this.fleet.configure(result.settings);
      this.loaded = result.settings;
      this.loadErrors = [];
    } else {
      this.loaded = undefined;
      this.loadErrors = result.errors;
      for (const error of result.errors) this.log.error(`Invalid setting: ${error}`);
    }
    this.loadedEmitter.fire(this.loaded);
  }
}
