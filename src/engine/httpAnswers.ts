/**
 * What a model server's HTTP answers mean (SGLang's and vLLM's OpenAI-compatible API alike):
 * pure judges of /health and of a completion (ready only on a real answer with a non-empty
 * `choices` array), and the model list.
 */
import { hintMark } from '../util/hintMark';
import * as words from '../present/words/httpWords';

/**
 * `/health` (reference §2): 503 with an empty body while warm-up runs, 200 once a 1-token
 * generation answers; later 503s mean the scheduler did not answer in time.
 */
export function judgeHealth(status: number): 'ok' | 'warming' | 'error' {
  if (status === 200) return 'ok';
  if (status === 503) return 'warming';
  return 'error';
}

/**
 * Why a 401 came back. SGLang started with `--api-key` lets only `/health` and `/metrics`
 * through without `Authorization: Bearer KEY`.
 */
export function unauthorizedReason(apiKeySent: boolean): string {
  return apiKeySent ? words.apiKeyRefused() : words.apiKeyWanted(hintMark('set-api-key'));
}

/** `HTTP 503`, or for a 401 what the user must do about it. */
export function statusReason(status: number, apiKeySent = false): string {
  return status === 401 ? unauthorizedReason(apiKeySent) : `HTTP ${status}`;
}

export type CompletionVerdict =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly reason: string };

export function isJsonContentType(contentType: string): boolean {
  const mime = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return mime === 'application/json' || /^application\/[\w.+-]*\+json$/.test(mime);
}

function clip(s: string, n = 200): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n)}…` : one;
}

function errorMessageOf(obj: Record<string, unknown>): string | undefined {
  const m = obj['message'];
  if (typeof m === 'string') return m;
  const e = obj['error'];
  if (typeof e === 'string') return e;
  if (typeof e === 'object' && e !== null && typeof (e as Record<string, unknown>)['message'] === 'string') {
    return (e as Record<string, unknown>)['message'] as string;
  }
  const d = obj['detail'];
  if (typeof d === 'string') return d;
  return undefined;
}

export function parseObject(body: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(body);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Ready only on SGLang's own evidence: HTTP 200, a JSON content type, a body that parses, no
 * error object, and a non-empty `choices` whose first element has a string `text`
 * (/v1/completions; `message.content` of a chat answer is accepted too). Matching the word
 * "choices" is not enough: an error message can contain it (reference §6). A 401 says
 * plainly whether an API key is missing or was refused (`apiKeySent`: the request carried one).
 */
export function judgeCompletion(
  status: number,
  contentType: string,
  bodyText: string,
  truncated: boolean,
  apiKeySent = false,
): CompletionVerdict {
  if (status === 401) return { ok: false, reason: unauthorizedReason(apiKeySent) };
  if (truncated) return { ok: false, reason: words.answerCutOff() };
  const json = isJsonContentType(contentType);
  const obj = json ? parseObject(bodyText) : undefined;
  if (status !== 200) {
    const msg = obj ? errorMessageOf(obj) : undefined;
    if (msg) return { ok: false, reason: `HTTP ${status}: ${clip(msg)}` };
    if (/<html|<!doctype/i.test(bodyText)) return { ok: false, reason: words.htmlInsteadOfJson(status) };
    return {
      ok: false,
      reason: bodyText.trim() ? `HTTP ${status}: ${clip(bodyText, 120)}` : words.statusWithEmptyBody(status),
    };
  }
  if (!json)
    return { ok: false, reason: words.notJsonContentType(JSON.stringify(contentType || words.noContentType())) };
  if (!obj) {
    return {
      ok: false,
      reason: bodyText.trim() ? words.bodyNotJson() : words.bodyEmpty(),
    };
  }
  if (obj['object'] === 'error' || (obj['error'] !== undefined && obj['error'] !== null)) {
    return { ok: false, reason: words.serverAnsweredError(clip(errorMessageOf(obj) ?? words.noErrorMessage())) };
  }
  const choices = obj['choices'];
  if (!Array.isArray(choices)) return { ok: false, reason: words.noChoicesList() };
  if (choices.length === 0) return { ok: false, reason: words.emptyChoicesList() };
  const first: unknown = choices[0];
  if (typeof first === 'object' && first !== null) {
    const f = first as Record<string, unknown>;
    if (typeof f['text'] === 'string') return { ok: true, text: f['text'] };
    const message = f['message'];
    if (
      typeof message === 'object' &&
      message !== null &&
      typeof (message as Record<string, unknown>)['content'] === 'string'
    ) {
      return { ok: true, text: (message as Record<string, unknown>)['content'] as string };
    }
  }
  return { ok: false, reason: words.noGeneratedText() };
}

/** Model ids from `/v1/models` (`{"object":"list","data":[{"id":...}]}`); empty when none or unparseable. */
export function parseModels(body: string): string[] {
  const obj = parseObject(body);
  const data = obj?.['data'];
  if (!Array.isArray(data)) return [];
  return data
    .map((m: unknown) => (typeof m === 'object' && m !== null ? (m as Record<string, unknown>)['id'] : undefined))
    .filter((id): id is string => typeof id === 'string' && id !== '');
}
