/**
 * The restart confirmation's words and forecast, once for every front that asks (VS Code's
 * Continue/Cancel, MCP elicitation), and the rule for when a restart must be confirmed.
 */
import { serverHosts, type ServerProfile } from '../config/config';
import type { FleetVerbs } from '../fleet/fleetVerbs';
import { expectedLoadTime } from '../present/forecast';
import { errorText } from '../util/errors';
import * as words from '../present/words/agentWords';
import { TOOL_FORECAST_MS } from './limits';

export interface RestartQuestion {
  readonly title: string;
  /** Paragraphs, in order. */
  readonly lines: readonly string[];
}

/** What the user is asked before a restart: the server, the unit, the expected load time. Pure. */
export function restartQuestion(server: ServerProfile, expected: string, force: boolean): RestartQuestion {
  return {
    title: words.restartTitle(server.unit, server.name),
    lines: [
      words.restartStops(server.unit, server.name, serverHosts(server)),
      words.expectedLoadTime(expected),
      force ? words.forceCutsLoad() : words.loadUnderWayFollowed(),
    ],
  };
}

/**
 * Whether a kimi_restart call must be confirmed by the user first: with
 * kimiService.confirmRestart on, unless it only follows a load already under way (nothing on the
 * host is touched then). Pure.
 */
export function restartNeedsConfirmation(confirmRestart: boolean, loading: boolean, force: boolean): boolean {
  return confirmRestart && (force || !loading);
}

/** The forecast in words, never slower than `waitMs` (a confirmation must come up fast). */
export async function boundedForecast(
  fleet: Pick<FleetVerbs, 'forecast'>,
  server: ServerProfile,
  waitMs = TOOL_FORECAST_MS,
): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const forecast = await Promise.race([
      fleet.forecast(server),
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), waitMs))),
    ]);
    return expectedLoadTime(forecast, words.noForecastWithin(waitMs / 1000));
  } catch (error) {
    return expectedLoadTime(undefined, errorText(error));
  } finally {
    clearTimeout(timer);
  }
}
