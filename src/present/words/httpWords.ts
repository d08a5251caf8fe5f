/**
 * Why a model server's HTTP answer is not what was asked for (a completion, the model list, the
 * server's description), in the display language. Pure functions of the facts engine/httpAnswers.ts
 * and engine/serverHttp.ts judge; the server's own error message and body are quoted as they are.
 */
import * as l10n from '@vscode/l10n';

export function apiKeyRefused(): string {
  return l10n.t('HTTP 401: the server refused the API key');
}

/** `hint`: the mark present/hints.ts turns into the front's way to set the key. */
export function apiKeyWanted(hint: string): string {
  return l10n.t('HTTP 401: the server wants an API key (--api-key): {0}', hint);
}

export function answerCutOff(): string {
  return l10n.t('the answer was too large and was cut off: not a normal completion');
}

export function htmlInsteadOfJson(status: number): string {
  return l10n.t('HTTP {0} with an HTML page instead of JSON', status);
}

export function statusWithEmptyBody(status: number): string {
  return l10n.t('HTTP {0} with an empty body', status);
}

/** `contentType`: as the server sent it, quoted. */
export function notJsonContentType(contentType: string): string {
  return l10n.t('unexpected content type {0} (expected JSON)', contentType);
}

export function noContentType(): string {
  return l10n.t('(none)');
}

export function bodyNotJson(): string {
  return l10n.t('the body is not valid JSON (cut short or garbled)');
}

export function bodyEmpty(): string {
  return l10n.t('the body is empty');
}

/** `message`: the server's own words. */
export function serverAnsweredError(message: string): string {
  return l10n.t('the server answered with an error: {0}', message);
}

export function noErrorMessage(): string {
  return l10n.t('no message');
}

export function noChoicesList(): string {
  return l10n.t('the answer has no "choices" list');
}

export function emptyChoicesList(): string {
  return l10n.t('the answer has an empty "choices" list');
}

export function noGeneratedText(): string {
  return l10n.t('the first choice has no generated text');
}

export function connectionRefused(): string {
  return l10n.t('connection refused (port closed)');
}

export function noAnswerInTime(): string {
  return l10n.t('no answer in time');
}

/** `what`: the status's reason. */
export function bodyCutOff(what: string): string {
  return l10n.t('{0} (body cut off)', what);
}

export function noModelListed(): string {
  return l10n.t('no model listed');
}

export function notAJsonObject(): string {
  return l10n.t('not a JSON object');
}

export function noBody(): string {
  return l10n.t('the server sent no body');
}

/** `forbidden`: why the SSH server refuses to forward (transport/curlFetch.ts). */
export function cannotReach(forbidden: string, url: string): string {
  return l10n.t('{0}: cannot reach {1}', forbidden, url);
}

export function nowThroughCurl(forbidden: string, url: string): string {
  return l10n.t('{0}: HTTP requests to {1} now run curl on the GPU host', forbidden, url);
}

/** The server announces another address than the configured url: `why` is one of the three below. */
export function announcedElsewhere(announced: string, why: string, configured: string, useUrl: string): string {
  return l10n.t(
    'The server says it listens on {0} ({1}), but the configured url is {2}: using {3}.',
    announced,
    why,
    configured,
    useUrl,
  );
}

export function anotherPort(): string {
  return l10n.t('another port');
}

export function anotherProtocol(announced: string, configured: string): string {
  return l10n.t('{0}, not {1}', announced, configured);
}

export function anotherAddress(): string {
  return l10n.t('another address');
}
