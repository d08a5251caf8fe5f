/**
 * Load advice in words: each advice's title, what in the load shows its reason, what to do, the
 * published figure around its measured numbers, and why it is held back or cannot be applied from
 * here. Pure functions of the facts engine/advice decides on; which advice applies stays the
 * rules' call, and the figures' numbers stay data in the catalogue (engine/advice/catalogue.ts).
 */
import * as l10n from '@vscode/l10n';

// ------------------------------------------------------------------------------ titles

export function multiThreadLoadTitle(threads: number): string {
  return l10n.t('Load the weights with {0} threads', threads);
}

export function prefetchTitle(): string {
  return l10n.t('Prefetch the checkpoint into the page cache');
}

export function deepGemmTitle(): string {
  return l10n.t('Pre-compile the DeepGEMM kernels once');
}

export function graphMaxBsTitle(batchSize: number): string {
  return l10n.t('Capture CUDA graphs up to batch size {0} only', batchSize);
}

export function warmCacheTitle(): string {
  return l10n.t('Warm the page cache before the restart');
}

// ------------------------------------------------------------------------------ evidence

/** "loading weights took 3m 37s of 4m 35s (the largest phase)"; `took`, `total` already formatted. */
export function loadingWeightsTook(took: string, total: string, largest: boolean): string {
  return largest
    ? l10n.t('loading weights took {0} of {1} (the largest phase)', took, total)
    : l10n.t('loading weights took {0} of {1}', took, total);
}

export function capturingGraphsTook(took: string, total: string, largest: boolean): string {
  return largest
    ? l10n.t('capturing CUDA graphs took {0} of {1} (the largest phase)', took, total)
    : l10n.t('capturing CUDA graphs took {0} of {1}', took, total);
}

/** `quote`: the loader's own log line, kept as it reads. */
export function singleThreadLoaderSeen(quote: string): string {
  return l10n.t('the log shows the single-threaded loader ({0})', quote);
}

export function flagNotSet(flag: string): string {
  return l10n.t('{0} is not set', flag);
}

export function flagIs(flag: string, value: string): string {
  return l10n.t('{0} is {1}', flag, value);
}

export function autoPrefetchOff(filesystem: string): string {
  return l10n.t('vLLM said auto-prefetch is off on this filesystem ({0})', filesystem);
}

export function readCold(percent: number, fsType: string | undefined): string {
  return l10n.t(
    'the weights were read cold ({0} % in the page cache at the start) from {1}, where vLLM does not prefetch by itself',
    percent,
    String(fsType),
  );
}

/** Sizes already formatted ("590.2 GiB"). */
export function weightsFit(weights: string, available: string): string {
  return l10n.t('the weights ({0}) fit in the available memory ({1})', weights, available);
}

/** `quote`: SGLang's own log line. */
export function deepGemmCompiled(took: string, quote: string): string {
  return l10n.t('this load compiled DeepGEMM kernels for {0} ({1})', took, quote);
}

export function deepGemmCacheSetYetCompiled(dir: string): string {
  return l10n.t('SGLANG_DG_CACHE_DIR is set ({0}) and the kernels were compiled anyway', dir);
}

export function deepGemmCacheUnset(): string {
  return l10n.t('SGLANG_DG_CACHE_DIR is not set in the unit');
}

export function withoutDeepGemm(took: string): string {
  return l10n.t('(without the {0} of DeepGEMM compiling inside it)', took);
}

export function batchSizesCaptured(count: number, largest: number | undefined): string {
  return l10n.t('{0} batch sizes were captured, up to {1}', count, String(largest));
}

export function residentAtStart(percent: number): string {
  return l10n.t('{0} % of the weights were in the page cache when the load began', percent);
}

// ------------------------------------------------------------------------------ what to do

/** `change`: the flag and its value as typed on the command line. */
export function addFlag(change: string): string {
  return l10n.t('add {0}', change);
}

/** `command`: the compile command with the server's model and parallelism. */
export function deepGemmAction(command: string): string {
  return l10n.t(
    "run once: {0} (with the server's other arguments), and keep SGLANG_DG_CACHE_DIR on a persistent disk",
    command,
  );
}

export function graphMaxBsAction(flag: string, batchSize: number): string {
  return l10n.t(
    'set {0} {1} (only if the server rarely runs more than {1} requests at once: larger batches then run without CUDA graphs)',
    flag,
    batchSize,
  );
}

export function warmCacheAction(): string {
  return l10n.t('read the weights into the page cache before the next restart (the restart dialog offers it)');
}

// ------------------------------------------------------------------------------ published figures

/** Seconds before and after, as measured. */
export type Span = readonly [before: number, after: number];

function span([before, after]: Span): string {
  return `${before} s -> ${after} s`;
}

export function multiThreadFigure(model: string, fromDisk: Span, fromPageCache: Span): string {
  return l10n.t('{0} from NVMe: {1}; from the page cache: {2}', model, span(fromDisk), span(fromPageCache));
}

/** `onItsOwn`: the two filesystems vLLM prefetches on by itself. */
export function prefetchFigure(
  model: string,
  gpus: string,
  weights: Span,
  secondServer: Span,
  onItsOwn: readonly [string, string],
): string {
  return l10n.t(
    '{0} on {1}: weights {2} (a second server: {3}); vLLM turns it on by itself only on {4} and {5}',
    model,
    gpus,
    span(weights),
    span(secondServer),
    onItsOwn[0],
    onItsOwn[1],
  );
}

/** `quote`: SGLang's own words, kept as they read. */
export function deepGemmFigure(quote: string): string {
  return l10n.t(
    'SGLang: {0}; a persistent SGLANG_DG_CACHE_DIR avoids it on later starts, though some users still see a recompile',
    quote,
  );
}

export function graphMaxBsFigure(flag: string, year: number, sizes: number, gpu: string): string {
  return l10n.t(
    'SGLang captures one CUDA graph per batch size up to {0}, and serves nothing during the capture; the default list grew in {1} (up to {2} sizes on {3})',
    flag,
    year,
    sizes,
    gpu,
  );
}

export function warmCacheFigure(ratio: number): string {
  return l10n.t(
    "a warm page cache turns the cold weight read into a memory copy: the extension's pre-warm measured {0}x of the cold downtime on the simulated host",
    ratio,
  );
}

/** `section`: the benchmark's section in BENCHMARKS.md. */
export function benchmarksSource(file: string, section: string): string {
  return `${file} (${section})`;
}

// ------------------------------------------------------------------------------ why not from here

export function deepGemmManual(): string {
  return l10n.t(
    'a command to run once on the host and an environment variable, not a command-line flag: nothing is changed from here',
  );
}

export function warmCacheManual(): string {
  return l10n.t('not a command-line change: the restart dialog offers to warm the page cache first');
}

/** `what`: the flag the advice sets, or undefined for the advice itself. */
export function versionUnknown(engine: string, minVersion: string, what: string | undefined): string {
  return what === undefined
    ? l10n.t(
        'the {0} version on the host is unknown (it needs {1} or later): check that it accepts this before you change anything',
        engine,
        minVersion,
      )
    : l10n.t(
        'the {0} version on the host is unknown (it needs {1} or later): check that it accepts {2} before you change anything',
        engine,
        minVersion,
        what,
      );
}

export function versionNotARelease(engine: string, version: string, source: string): string {
  return l10n.t('the {0} version "{1}" ({2}) is not a release number', engine, version, source);
}

/** Held back: the engine is older than the first release with `what` (a flag, or the advice's title). */
export function versionPredates(
  engine: string,
  version: string,
  source: string,
  minVersion: string,
  what: string,
): string {
  return l10n.t('{0} {1} ({2}) predates {3}, the first release with {4}', engine, version, source, minVersion, what);
}

/** A container's command line is not edited from here: `action` is what to do. */
export function dockerByHand(unit: string, action: string): string {
  return l10n.t('{0} runs in Docker: {1} in its command line by hand', unit, action);
}

/** Where the engine's version was read, when the load's own log said it. */
export function versionFromTheLog(): string {
  return l10n.t('the log');
}

// ------------------------------------------------------------------------------ the facts gathered, in the log

/** `phases`: each load phase's milliseconds, as JSON. */
export function logLinesSinceStart(lines: number, phases: string): string {
  return l10n.t('advice: {0} log lines since the process started; phases {1}', lines, phases);
}

export function pageCacheUnreadable(why: string): string {
  return l10n.t('advice: the page cache could not be read: {0}', why);
}

/** `said`: what the version command (`command`) printed. */
export function versionUnknownLine(module: string, command: string, said: string): string {
  return l10n.t("advice: {0}'s version is unknown ({1} said {2})", module, command, said);
}
