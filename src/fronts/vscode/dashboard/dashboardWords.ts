/**
 * The load dashboard's words, made here in the extension host in the display language and handed to
 * the page as data: the page's script only fills the {N} of a template with its figures (durations,
 * percentages it computes as time passes), so no sentence is written in media/dashboard.js. Pure.
 */
import * as l10n from '@vscode/l10n';

/** Placeholders handed through l10n.t, for the page to fill. */
const P0 = '{0}';
const P1 = '{1}';
const P2 = '{2}';

export interface DashboardWords {
  readonly title: string;
  readonly phasesHeading: string;
  readonly rateHeading: string;
  readonly gpuHeading: string;
  readonly verificationHeading: string;
  readonly historyBand: string;
  readonly rateUnit: string;
  readonly gpuUnit: string;
  /** "Phase: {0}". */
  readonly phase: string;
  /** "Loaded in {0}" (a duration). */
  readonly loadedIn: string;
  /** "Elapsed {0}". */
  readonly elapsed: string;
  /** "ETA {0} left ({1})": a duration, the basis. */
  readonly eta: string;
  /** "History: {0}–{1} over {2} loads". */
  readonly history: string;
  /** "restarting: {0}": the time from the restart to the first phase. */
  readonly restarting: string;
  /** "{0}: {1}": a phase and its duration. */
  readonly phaseTook: string;
  /** "this load: {0}". */
  readonly thisLoad: string;
  /** "{0} load(s) before: {1}". */
  readonly loadBefore: string;
  /** "{0} load(s) before: none". */
  readonly loadBeforeNone: string;
}

export function dashboardWords(): DashboardWords {
  return {
    title: l10n.t('Kimi load'),
    phasesHeading: l10n.t('Phases'),
    rateHeading: l10n.t('Read rate (MB/s)'),
    gpuHeading: l10n.t('GPU memory (GiB, all GPUs)'),
    verificationHeading: l10n.t('Parser verification'),
    historyBand: l10n.t('past loads'),
    rateUnit: 'MB/s',
    gpuUnit: 'GiB',
    phase: l10n.t('Phase: {0}', P0),
    loadedIn: l10n.t('Loaded in {0}', P0),
    elapsed: l10n.t('Elapsed {0}', P0),
    eta: l10n.t('ETA {0} left ({1})', P0, P1),
    history: l10n.t('History: {0}–{1} over {2} loads', P0, P1, P2),
    restarting: l10n.t('restarting: {0}', P0),
    phaseTook: l10n.t('{0}: {1}', P0, P1),
    thisLoad: l10n.t('this load: {0}', P0),
    loadBefore: l10n.t('{0} load(s) before: {1}', P0, P1),
    loadBeforeNone: l10n.t('{0} load(s) before: none', P0),
  };
}

/** What an ETA is computed from, in the display language. */
export function etaBasisWord(basis: string): string {
  switch (basis) {
    case 'bytes+cache':
      return l10n.t('bytes read and page cache');
    case 'bytes':
      return l10n.t('bytes read');
    case 'shards':
      return l10n.t('shards loaded');
    case 'history':
      return l10n.t('past loads');
    case 'defaults':
      return l10n.t('default figures');
    default:
      return basis;
  }
}
