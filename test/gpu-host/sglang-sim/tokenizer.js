'use strict';
// The simulated model's tokenizer files and the server's own counting (SGLang's /tokenize).
// A small byte-level BPE is trained here (deterministically) on a fixed corpus and written in
// the formats of real model folders: Kimi's tiktoken.model + tokenizer_config.json, or a Hugging
// Face tokenizer.json with the same merges. Counting is this file's own BPE (tiktoken's
// algorithm: merge the adjacent pair whose joined bytes have the lowest rank), written apart from
// the extension's (js-tiktoken, @huggingface/tokenizers), so the two can disagree when one is wrong.
const fs = require('fs');
const path = require('path');

// Kimi's pat_str (tokenization_kimi.py), in JavaScript's dialect (no `&&`, no `(?i:)`).
const NOT_HAN = (cls) => `(?:(?!\\p{sc=Han})[${cls}])`;
const UP = '\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}';
const LO = '\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}';
const CONTR = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";
const PATTERN = [
  '\\p{sc=Han}+',
  `[^\\r\\n\\p{L}\\p{N}]?${NOT_HAN(UP)}*${NOT_HAN(LO)}+${CONTR}?`,
  `[^\\r\\n\\p{L}\\p{N}]?${NOT_HAN(UP)}+${NOT_HAN(LO)}*${CONTR}?`,
  '\\p{N}{1,3}',
  ' ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*',
  '\\s*[\\r\\n]+',
  '\\s+(?!\\S)',
  '\\s+',
].join('|');

// Kimi's named special tokens, by their offset from the number of ranks (163584 in the real model).
const KIMI_SPECIALS = {
  0: '[BOS]',
  1: '[EOS]',
  2: '<|im_end|>',
  3: '<|im_user|>',
  4: '<|im_assistant|>',
  6: '<|start_header_id|>',
  7: '<|end_header_id|>',
  9: '[EOT]',
  10: '<|im_system|>',
  11: '<|tool_calls_section_begin|>',
  12: '<|tool_calls_section_end|>',
  13: '<|tool_call_begin|>',
  14: '<|tool_call_argument_begin|>',
  15: '<|tool_call_end|>',
  17: '<|im_middle|>',
  254: '[UNK]',
  255: '[PAD]',
};
const RESERVED = 256;

const CORPUS = [
  'What is the weather in Paris? Use the tool. The weather in Paris is 18 degrees and sunny.',
  'You are Kimi, an AI assistant created by Moonshot AI. The user asks; the assistant answers.',
  'function get_weather(city) { return fetch(`/weather?city=${city}`).then((r) => r.json()); }',
  'The tool returned a result. I will summarise it for the user. Here is what I found.',
  'def fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)\n',
  '{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}',
  'Kimi K2 is a mixture-of-experts language model with 32 billion activated parameters.',
  '你好世界，今天天气很好。我们去公园散步吧。',
  'SGLang and vLLM serve the model; the extension restarts and watches them over SSH.',
  "It's the reasoning that comes back with the tool call; don't drop it, we're told.",
].join('\n');

function pieces(text) {
  return text.match(new RegExp(PATTERN, 'gu')) || [];
}

/** byte-level BPE training: returns ranks (Buffers, rank = index) and the merges (pairs of ranks) */
function train(merges = 600, corpus = CORPUS) {
  const ranks = [];
  for (let b = 0; b < 256; b++) ranks.push(Buffer.from([b]));
  const words = pieces(corpus).map((p) => [...Buffer.from(p, 'utf8')]);
  const pairs = [];
  for (let m = 0; m < merges; m++) {
    const counts = new Map();
    for (const w of words)
      for (let i = 0; i + 1 < w.length; i++) {
        const k = w[i] * 1_000_000 + w[i + 1];
        counts.set(k, (counts.get(k) || 0) + 1);
      }
    let best = -1;
    let bestN = 1;
    for (const [k, n] of counts) if (n > bestN || (n === bestN && best >= 0 && k < best)) ((best = k), (bestN = n));
    if (best < 0) break;
    const a = Math.floor(best / 1_000_000);
    const b = best % 1_000_000;
    const id = ranks.length;
    ranks.push(Buffer.concat([ranks[a], ranks[b]]));
    pairs.push([a, b]);
    for (const w of words) for (let i = 0; i + 1 < w.length; i++) if (w[i] === a && w[i + 1] === b) w.splice(i, 2, id);
  }
  return { ranks, pairs };
}

function tiktokenModelText(ranks) {
  return ranks.map((r, i) => `${r.toString('base64')} ${i}\n`).join('');
}

function kimiTokenizerConfig(rankCount) {
  const decoder = {};
  for (const [off, content] of Object.entries(KIMI_SPECIALS))
    decoder[String(rankCount + Number(off))] = {
      content,
      lstrip: false,
      normalized: false,
      rstrip: false,
      single_word: false,
      special: true,
    };
  return {
    added_tokens_decoder: decoder,
    additional_special_tokens: ['<|im_end|>', '<|im_user|>', '<|im_assistant|>', '<|im_system|>', '<|im_middle|>'],
    bos_token: '[BOS]',
    eos_token: '[EOS]',
    pad_token: '[PAD]',
    unk_token: '[UNK]',
    tokenizer_class: 'TikTokenTokenizer',
    auto_map: { AutoTokenizer: ['tokenization_kimi.TikTokenTokenizer', null] },
  };
}

// GPT-2's byte-to-unicode map (what a byte-level tokenizer.json spells its vocabulary in).
function byteToUnicode() {
  const bs = [];
  for (let i = 33; i <= 126; i++) bs.push(i);
  for (let i = 161; i <= 172; i++) bs.push(i);
  for (let i = 174; i <= 255; i++) bs.push(i);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++)
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  const map = new Array(256);
  bs.forEach((b, i) => (map[b] = String.fromCodePoint(cs[i])));
  return map;
}

/** the same merges as a Hugging Face tokenizer.json (BPE, Split by Kimi's pattern, ByteLevel without its own regex), ChatML specials */
function tokenizerJson(ranks, pairs) {
  const b2u = byteToUnicode();
  const spell = (buf) => [...buf].map((b) => b2u[b]).join('');
  const vocab = {};
  ranks.forEach((r, i) => (vocab[spell(r)] = i));
  const specials = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: specials.map((content, i) => ({
      id: ranks.length + i,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        {
          type: 'Split',
          pattern: { Regex: PATTERN.replace(/\\p\{sc=Han\}/g, '\\p{Han}') },
          behavior: 'Isolated',
          invert: false,
        },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
      ],
    },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: pairs.map(([a, b]) => [spell(ranks[a]), spell(ranks[b])]),
    },
  };
}

/** writes the tokenizer files into a model folder: kind 'tiktoken' (Kimi's) or 'tokenizer.json' */
function writeTokenizerFiles(dir, kind = 'tiktoken') {
  const { ranks, pairs } = train();
  if (kind === 'tokenizer.json') {
    fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(tokenizerJson(ranks, pairs)));
    fs.writeFileSync(
      path.join(dir, 'tokenizer_config.json'),
      JSON.stringify({ tokenizer_class: 'PreTrainedTokenizerFast', eos_token: '<|im_end|>' }, null, 2),
    );
  } else {
    fs.writeFileSync(path.join(dir, 'tiktoken.model'), tiktokenModelText(ranks));
    fs.writeFileSync(
      path.join(dir, 'tokenizer_config.json'),
      JSON.stringify(kimiTokenizerConfig(ranks.length), null, 2),
    );
  }
}

/** the server's tokenizer, from the model folder's files (undefined: none there) */
function loadTokenizer(dir) {
  let ranks;
  let specials = {};
  try {
    if (fs.existsSync(path.join(dir, 'tiktoken.model'))) {
      const lines = fs.readFileSync(path.join(dir, 'tiktoken.model'), 'utf8').split('\n').filter(Boolean);
      ranks = new Map();
      for (const line of lines) {
        const [b64, rank] = line.split(' ');
        ranks.set(Buffer.from(b64, 'base64').toString('latin1'), Number(rank));
      }
      const cfg = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer_config.json'), 'utf8'));
      for (let id = ranks.size; id < ranks.size + RESERVED; id++) {
        const named = cfg.added_tokens_decoder && cfg.added_tokens_decoder[String(id)];
        specials[(named && named.content) || `<|reserved_token_${id}|>`] = id;
      }
    } else if (fs.existsSync(path.join(dir, 'tokenizer.json'))) {
      const tj = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8'));
      const u2b = new Map(byteToUnicode().map((u, b) => [u, b]));
      ranks = new Map();
      for (const [spelled, id] of Object.entries(tj.model.vocab))
        ranks.set(Buffer.from([...spelled].map((c) => u2b.get(c))).toString('latin1'), id);
      for (const t of tj.added_tokens || []) specials[t.content] = t.id;
    } else return undefined;
  } catch {
    return undefined;
  }
  const specialRe = Object.keys(specials).length
    ? new RegExp(
        Object.keys(specials)
          .map((s) => s.replace(/[\\^$*+?.()|[\]{}]/g, '\\$&'))
          .join('|'),
        'g',
      )
    : null;
  function bpe(piece) {
    const bytes = Buffer.from(piece, 'utf8').toString('latin1');
    if (ranks.has(bytes)) return [ranks.get(bytes)];
    let parts = [...bytes];
    for (;;) {
      let best = -1;
      let bestRank = Infinity;
      for (let i = 0; i + 1 < parts.length; i++) {
        const r = ranks.get(parts[i] + parts[i + 1]);
        if (r !== undefined && r < bestRank) ((bestRank = r), (best = i));
      }
      if (best < 0) break;
      parts.splice(best, 2, parts[best] + parts[best + 1]);
    }
    return parts.map((p) => ranks.get(p));
  }
  function encode(text) {
    const ids = [];
    let at = 0;
    const plain = (t) => {
      for (const p of pieces(t)) ids.push(...bpe(p));
    };
    if (specialRe) {
      specialRe.lastIndex = 0;
      let m;
      while ((m = specialRe.exec(text))) {
        plain(text.slice(at, m.index));
        ids.push(specials[m[0]]);
        at = m.index + m[0].length;
      }
    }
    plain(text.slice(at));
    return ids;
  }
  return { encode };
}

const loaded = new Map();

/** POST /tokenize (SGLang's and vLLM's): {prompt, add_special_tokens} -> {tokens, count, max_model_len}; 404 without tokenizer files */
function tokenizeRoute(body, dir, maxModelLen) {
  if (!loaded.has(dir)) loaded.set(dir, loadTokenizer(dir));
  const tok = loaded.get(dir);
  if (!tok) return [404, { detail: 'Not Found' }];
  const prompts = Array.isArray(body.prompt) ? body.prompt : [body.prompt];
  if (prompts.some((p) => typeof p !== 'string'))
    return [
      400,
      { object: 'error', message: 'prompt must be a string or a list of strings', type: 'BadRequestError', code: 400 },
    ];
  const tokens = prompts.map((p) => tok.encode(p));
  return Array.isArray(body.prompt)
    ? [200, { tokens, count: tokens.map((t) => t.length), max_model_len: maxModelLen }]
    : [200, { tokens: tokens[0], count: tokens[0].length, max_model_len: maxModelLen }];
}

/** the image parts of a chat request's messages, as their mime types ("image/png") */
function chatImages(messages) {
  const out = [];
  for (const m of Array.isArray(messages) ? messages : [])
    if (m && Array.isArray(m.content))
      for (const p of m.content)
        if (p && p.type === 'image_url') {
          const url = (p.image_url && p.image_url.url) || '';
          const mt = /^data:([^;,]+)[;,]/.exec(url);
          out.push(mt ? mt[1] : 'url');
        }
  return out;
}

/** config.json has a vision tower's config (Kimi K2.5's vision_config) */
function isVisionModel(dir) {
  try {
    const cfg = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
    return !!cfg.vision_config;
  } catch {
    return false;
  }
}

module.exports = {
  tokenizeRoute,
  chatImages,
  isVisionModel,
  PATTERN,
  train,
  tiktokenModelText,
  kimiTokenizerConfig,
  tokenizerJson,
  writeTokenizerFiles,
  loadTokenizer,
};
