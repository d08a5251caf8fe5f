/**
 * The restart confirmation's words and forecast, once for every front that asks (VS Code's
 * Continue/Cancel, MCP elicitation), and the rule for when a restart must be confirmed.
 */
import { serverHosts, type ServerProfile } from '../config/config';
import type { FleetVerbs } from '../fleet/fleetVerbs';
import { expectedLoadTime } from '../present/forecast';
import { errorText } from '../util/errors';
import { TOOL_FORECAST_MS } from './limits';

export interface RestartQuestion {
  readonly title: string;
  /** Paragraphs, in order. */
  readonly lines: readonly string[];
}

/** What the user is asked before a restart: the server, the unit, the expected load time. Pure. */
export function restartQuestion(server: ServerProfile, expected: string, force: boolean): RestartQuestion {
  return {
    title: `Restart ${server.unit} on ${server.name}?`,
    lines: [
      `The model server ${server.unit} on ${server.name} (${serverHosts(server)}) stops now and is unavailable until it has loaded again.`,
      `Expected load time: ${expected}.`,
      force
        ? 'force: a load already under way is cut short and started again.'
        : 'If a load is already under way (someone else restarted it moments ago), it is followed instead of restarted again.',
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
    return expectedLoadTime(forecast, `no forecast within ${waitMs / 1000} s`);
  } catch (error) {
    return expectedLoadTime(undefined, errorText(error));
  } finally {
    clearTimeout(timer);
  }
}
