/**
 * The load forecast in words, for every front that tells it before a restart: "~9 min: 41% of
 * the weights are cached", with its warning in brackets, or "unknown (why)". Pure.
 */
import type { LoadForecast } from '../monitor/forecast/loadInsights';

export function expectedLoadTime(forecast: Pick<LoadForecast, 'text' | 'warning'> | undefined, why?: string): string {
  if (!forecast) return `unknown${why ? ` (${why})` : ''}`;
  const warning = forecast.warning ? ` (${forecast.warning})` : '';
  return forecast.text ? `${forecast.text}${warning}` : `unknown${warning}`;
}
