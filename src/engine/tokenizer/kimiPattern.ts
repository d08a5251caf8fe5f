/**
 * Kimi's pre-tokenizer pattern (`pat_str` of moonshotai's tokenization_kimi.py, the same in K2,
 * K2 Thinking, K2.5 and Kimi Linear), and the same pattern in JavaScript's `u` dialect, which has
 * neither class intersections (`&&`) nor inline flags (`(?i:...)`):
 *   `[CLASS&&[^\p{Han}]]`  ->  `(?:(?!\p{sc=Han})[CLASS])`  (one code point, not Han)
 *   `(?i:'s|'t|...)`       ->  `(?:'[sS]|'[tT]|...)`
 *   `\p{Han}`              ->  `\p{sc=Han}` (a script, which JavaScript names with `sc=`)
 * The test fixture test/fixtures/kimi-pretokenize.json holds the splits of the upstream pattern
 * by Python's `regex` module (the semantics tiktoken's Rust engine implements) for comparison.
 */

/** The upstream pattern, as written in tokenization_kimi.py. */
export const KIMI_PAT_STR_UPSTREAM = [
  String.raw`[\p{Han}]+`,
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
  String.raw`\p{N}{1,3}`,
  String.raw` ?[^\s\p{L}\p{N}]+[\r\n]*`,
  String.raw`\s*[\r\n]+`,
  String.raw`\s+(?!\S)`,
  String.raw`\s+`,
].join('|');

const UPPER = String.raw`\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}`;
const LOWER = String.raw`\p{Ll}\p{Lm}\p{Lo}\p{M}`;
const notHan = (cls: string) => String.raw`(?:(?!\p{sc=Han})[${cls}])`;
const CONTRACTION = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])`;

/** The pattern for `new RegExp(pattern, 'ug')` (what js-tiktoken compiles). */
export const KIMI_PAT_STR_JS = [
  String.raw`\p{sc=Han}+`,
  String.raw`[^\r\n\p{L}\p{N}]?${notHan(UPPER)}*${notHan(LOWER)}+${CONTRACTION}?`,
  String.raw`[^\r\n\p{L}\p{N}]?${notHan(UPPER)}+${notHan(LOWER)}*${CONTRACTION}?`,
  String.raw`\p{N}{1,3}`,
  String.raw` ?[^\s\p{L}\p{N}]+[\r\n]*`,
  String.raw`\s*[\r\n]+`,
  String.raw`\s+(?!\S)`,
  String.raw`\s+`,
].join('|');

/** Kimi's tokenizer reserves this many ids after the ranks for special tokens. */
export const KIMI_RESERVED_SPECIAL_TOKENS = 256;
