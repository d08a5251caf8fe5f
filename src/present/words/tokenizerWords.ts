/**
 * How the chat model's tokens are counted and whether the model takes images, in the display
 * language: the tokenizer's and the model folder's facts (engine/tokenizer) put in words.
 */
import * as l10n from '@vscode/l10n';

/** `framing`: how messages are framed (chatFraming below). */
export function exactTiktoken(ranks: number, sha: string, specials: number, framing: string): string {
  return l10n.t(
    "exact: the model's tiktoken.model ({0} ranks, sha256 {1}) with Kimi's pre-tokenizer pattern and {2} special tokens; messages framed as {3}",
    ranks,
    sha,
    specials,
    framing,
  );
}

export function exactTokenizerJson(sha: string, framing: string): string {
  return l10n.t("exact: the model's tokenizer.json (sha256 {0}); messages framed as {1}", sha, framing);
}

/** How messages are framed: the model's chat template, ChatML, or plain text with 4 tokens each. */
export function chatFraming(kind: 'kimi' | 'chatml' | 'plain'): string {
  if (kind === 'kimi') return l10n.t("Kimi's chat template");
  if (kind === 'chatml') return 'ChatML';
  return l10n.t('text + 4 tokens');
}

export function estimated(why: string): string {
  return l10n.t('estimated (characters / 4, 4 tokens a message): {0}', why);
}

export function noReadableConfig(): string {
  return l10n.t('the model folder has no readable config.json');
}

export function configNotJson(): string {
  return l10n.t('config.json is not JSON');
}

export function configHas(key: string): string {
  return l10n.t('config.json has {0}', key);
}

export function configNamesImageToken(): string {
  return l10n.t('config.json names an image token');
}

export function noVisionTower(): string {
  return l10n.t('config.json has no vision tower (vision_config)');
}
