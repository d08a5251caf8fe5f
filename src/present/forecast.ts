/**
 * The load forecast in words, for every front that tells it before a restart: "~9 min: 41% of
 * the weights are cached", with its warning in brackets, or "unknown (why)". Pure.
 */
import type { LoadFacts, LoadForecast } from '../monitor/forecast/loadInsights';
import { compileForecastAdvice, compileForecastText } from './compileForecast';

export function expectedLoadTime(forecast: Pick<LoadForecast, 'text' | 'warning'> | undefined, why?: string): string {
  if (!forecast) return `unknown${why ? ` (${why})` : ''}`;
  const warning = forecast.warning ? ` (${forecast.warning})` : '';
  return forecast.text ? `${forecast.text}${warning}` : `unknown${warning}`;
}

/** The forecast's facts in words: the load time, then each compile an empty kernel cache adds, and how to keep the cache. */
export function forecastInWords(facts: LoadFacts): LoadForecast {
  const text = [facts.loadText, compileForecastText(facts.compiles)].filter(Boolean).join('; ') || undefined;
  const advice = compileForecastAdvice(facts.compiles);
  return {
    modelPath: facts.modelPath,
    residentBytes: facts.residentBytes,
    totalBytes: facts.totalBytes,
    text,
    warning: facts.warning,
    ...(advice ? { advice } : {}),
    prior: facts.prior,
  };
}
