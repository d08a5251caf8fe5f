/**
 * The load forecast in words, for every front that tells it before a restart: "~9 min: 41% of
 * the weights are cached", with its warning in brackets, or "unknown (why)". Pure.
 */
import * as l10n from '@vscode/l10n';
import type { LoadFacts, LoadForecast } from '../monitor/forecast/loadInsights';
import { compileForecastAdvice, compileForecastText } from './compileForecastText';

export function expectedLoadTime(forecast: Pick<LoadForecast, 'text' | 'warning'> | undefined, why?: string): string {
  if (!forecast) return why ? l10n.t('unknown ({0})', why) : l10n.t('unknown');
  const text = forecast.text ?? '';
  if (forecast.warning) return text ? `${text} (${forecast.warning})` : l10n.t('unknown ({0})', forecast.warning);
  return text || l10n.t('unknown');
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
