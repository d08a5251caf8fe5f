/**
 * Engine versions: read from the engine's own words (a log line, an HTTP answer, the package's
 * `__version__`), compared as release numbers. Pure.
 */
import type { EngineId as Engine } from '../engine';

export interface EngineVersion {
  /** As the engine printed it: `0.5.4`, `0.11.0+faa43dbf`, `0.5.11.dev20260512`. */
  readonly text: string;
  /** Where it was read: "the log", "/server_info", "python -c ...". */
  readonly source: string;
}

/** `0.5.4.post1` -> [0, 5, 4]; undefined when the text does not start with a release number. */
export function releaseOf(text: string): number[] | undefined {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(text.trim());
  if (!m) return undefined;
  return [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
}

/**
 * Whether `version` is at least `min`. A development build (`0.5.11.dev2026...`, `0.12.0rc1`)
 * counts as the release before it: it may predate the feature.
 */
export function atLeast(version: string, min: string): boolean | undefined {
  const v = releaseOf(version);
  const m = releaseOf(min);
  if (!v || !m) return undefined;
  const pre = /^v?\d+\.\d+(?:\.\d+)?(?:\.?dev|rc|a\d|b\d)/i.test(version.trim());
  for (let i = 0; i < 3; i++) {
    if (v[i]! !== m[i]!) return v[i]! > m[i]!;
  }
  return !pre;
}

const VLLM_LOG = /vLLM API server version (\d[\w.+-]*)/;
// SGLang prints no banner with its version; some builds log `sglang version: X` or `SGLang vX`.
const SGLANG_LOG = /\bsglang(?:[ _-]?version)?[:= ]+v?(\d+\.\d+\.\d+[\w.+-]*)/i;

/** The version a log line states, for the given engine. */
export function versionFromLogLine(engine: Engine, line: string): string | undefined {
  const m = (engine === 'vllm' ? VLLM_LOG : SGLANG_LOG).exec(line);
  return m?.[1];
}

/** A `print(x.__version__)` answer: the one line that is a version, else undefined. */
export function versionFromOutput(stdout: string): string | undefined {
  const line = stdout.trim().split('\n').pop()?.trim() ?? '';
  return /^\d+\.\d+(?:\.\d+)?[\w.+-]*$/.test(line) ? line : undefined;
}

/** `{"version": "0.5.4", ...}` of SGLang's /server_info, vLLM's /version. */
export function versionFromInfo(info: unknown): string | undefined {
  if (typeof info !== 'object' || info === null) return undefined;
  const v = (info as Record<string, unknown>)['version'];
  return typeof v === 'string' && releaseOf(v) ? v : undefined;
}
