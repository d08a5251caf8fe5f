/**
 * A `tiktoken.model` file (one `BASE64 RANK` line per mergeable token, what tiktoken's
 * load_tiktoken_bpe reads) and Kimi's special tokens from `tokenizer_config.json`, turned into
 * what js-tiktoken's `Tiktoken` takes. Pure: the caller reads the files.
 */
import type { TiktokenBPE } from 'js-tiktoken/lite';
import { KIMI_PAT_STR_JS, KIMI_RESERVED_SPECIAL_TOKENS } from './kimiPattern';
import { tiktokenBadLine, tiktokenBadRank, tiktokenEmpty } from '../../present/words/modelWords';

export class TokenizerFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenizerFileError';
  }
}

const LINE = /^([A-Za-z0-9+/]+={0,2}) (\d+)$/;

/** The number of ranks, checked: each line `BASE64 RANK`, ranks 0..n-1 each once. */
export function parseTiktokenRanks(text: string): { readonly count: number; readonly lines: readonly string[] } {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  if (lines.length === 0) throw new TokenizerFileError(tiktokenEmpty());
  const seen = new Uint8Array(lines.length);
  lines.forEach((line, i) => {
    const m = LINE.exec(line.trim());
    if (!m) throw new TokenizerFileError(tiktokenBadLine(i + 1, line.slice(0, 60)));
    const rank = Number(m[2]);
    if (rank >= lines.length || seen[rank])
      throw new TokenizerFileError(tiktokenBadRank(i + 1, rank, lines.length - 1));
    seen[rank] = 1;
  });
  return { count: lines.length, lines };
}

/**
 * Kimi's special tokens (tokenization_kimi.py): ids from the number of ranks on, 256 of them,
 * named by tokenizer_config.json's `added_tokens_decoder` where it names them, else
 * `<|reserved_token_ID|>`.
 */
export function kimiSpecialTokens(rankCount: number, tokenizerConfig: unknown): Record<string, number> {
  const decoder = (tokenizerConfig as { added_tokens_decoder?: unknown } | undefined)?.added_tokens_decoder;
  const named = new Map<number, string>();
  if (decoder && typeof decoder === 'object') {
    for (const [id, entry] of Object.entries(decoder as Record<string, unknown>)) {
      const content = (entry as { content?: unknown } | null)?.content;
      if (/^\d+$/.test(id) && typeof content === 'string') named.set(Number(id), content);
    }
  }
  const tokens: Record<string, number> = {};
  for (let id = rankCount; id < rankCount + KIMI_RESERVED_SPECIAL_TOKENS; id++)
    tokens[named.get(id) ?? `<|reserved_token_${id}|>`] = id;
  return tokens;
}

/** js-tiktoken's input: its `bpe_ranks` is lines of `NAME FIRST_RANK TOKEN...`; here one token a line. */
export function tiktokenBpe(modelText: string, tokenizerConfig: unknown): TiktokenBPE {
  const { count, lines } = parseTiktokenRanks(modelText);
  return {
    pat_str: KIMI_PAT_STR_JS,
    special_tokens: kimiSpecialTokens(count, tokenizerConfig),
    bpe_ranks: lines
      .map((line) => {
        const [token, rank] = line.trim().split(' ');
        return `t ${rank} ${token}`;
      })
      .join('\n'),
  };
}
