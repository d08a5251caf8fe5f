/**
 * Token counters: exact ones built from the served model's own tokenizer files (js-tiktoken for
 * a `tiktoken.model`, @huggingface/tokenizers for a `tokenizer.json`), and the stated estimate.
 * Pure: the files come in as text.
 */
import { Tiktoken } from 'js-tiktoken/lite';
import { Tokenizer } from '@huggingface/tokenizers';
import { frame, type FramedMessage, type FramingKind } from './framing';
import { tiktokenBpe, TokenizerFileError } from './tiktokenFile';
import { noTokenizer, notJson, tokenizerUnloadable } from '../../present/words/modelWords';
import * as words from '../../present/words/tokenizerWords';

export interface SyncTokenCounter {
  /** How counts are made, for the log: "exact: tiktoken.model (163840 ranks) ..." or "estimated: ...". */
  readonly how: string;
  readonly exact: boolean;
  /** Tokens of a plain text, as the server's /tokenize counts it (a special token's text is that token). */
  countText(text: string): number;
  /** Tokens of one chat message as the model's chat template renders it (framing.ts). */
  countMessage(message: FramedMessage): number;
}

/** The tokenizer files of a model folder, as read (names relative to the folder). */
export interface TokenizerFiles {
  readonly 'tiktoken.model'?: string;
  readonly 'tokenizer.json'?: string;
  readonly 'tokenizer_config.json'?: string;
}

function parseJson(text: string | undefined, name: string): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new TokenizerFileError(notJson(name, (error as Error).message));
  }
}

function messageCounter(
  kind: FramingKind,
  plain: (text: string) => number,
  markup: (text: string) => number,
): (message: FramedMessage) => number {
  return (message) =>
    frame(kind, message).reduce(
      (n, s) => n + ('fixed' in s ? s.fixed : 'markup' in s ? markup(s.markup) : plain(s.text)),
      0,
    );
}

/** A counter from a model folder's files: tiktoken.model first (Kimi), else tokenizer.json. */
export function counterFromFiles(files: TokenizerFiles, checksum: string): SyncTokenCounter {
  const config = parseJson(files['tokenizer_config.json'], 'tokenizer_config.json');
  const model = files['tiktoken.model'];
  if (model !== undefined) {
    const bpe = tiktokenBpe(model, config);
    const encoder = new Tiktoken(bpe);
    const specials = Object.keys(bpe.special_tokens);
    const kind: FramingKind = specials.includes('<|im_middle|>') ? 'kimi' : 'plain';
    // As the server's tokenizer (tokenization_kimi.py encodes with allowed_special="all"): a special token's text is that token.
    const plain = (text: string) => (text === '' ? 0 : encoder.encode(text, 'all', []).length);
    const markup = (text: string) => encoder.encode(text, 'all', []).length;
    return {
      how: words.exactTiktoken(
        bpe.bpe_ranks.split('\n').length,
        checksum.slice(0, 12),
        specials.length,
        words.chatFraming(kind),
      ),
      exact: true,
      countText: plain,
      countMessage: messageCounter(kind, plain, markup),
    };
  }
  const json = parseJson(files['tokenizer.json'], 'tokenizer.json');
  if (json === undefined) throw new TokenizerFileError(noTokenizer());
  let tokenizer: Tokenizer;
  try {
    tokenizer = new Tokenizer(json as object, (config ?? {}) as object);
  } catch (error) {
    throw new TokenizerFileError(tokenizerUnloadable((error as Error).message));
  }
  const added = ((json as { added_tokens?: { content?: unknown }[] }).added_tokens ?? []).map((t) => t.content);
  const kind: FramingKind = added.includes('<|im_start|>') && added.includes('<|im_end|>') ? 'chatml' : 'plain';
  const count = (text: string) => (text === '' ? 0 : tokenizer.encode(text, { add_special_tokens: false }).ids.length);
  return {
    how: words.exactTokenizerJson(checksum.slice(0, 12), words.chatFraming(kind)),
    exact: true,
    countText: count,
    countMessage: messageCounter(kind, count, count),
  };
}

/** The stated estimate: 4 characters a token, rounded up, and 4 tokens a message. */
export function estimateCounter(why: string): SyncTokenCounter {
  const plain = (text: string) => Math.ceil(text.length / 4);
  return {
    how: words.estimated(why),
    exact: false,
    countText: plain,
    countMessage: messageCounter('plain', plain, plain),
  };
}
