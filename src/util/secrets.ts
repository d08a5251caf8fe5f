/**
 * Masks secret values in text meant for a log line, a diff, a tooltip or a notification:
 * `--api-key K`, `Authorization: Bearer K`, `HF_TOKEN=V`, `"api_key": "V"`... become `***`,
 * the names stay. Pure; idempotent (masking masked text changes nothing).
 */

export const MASK = '***';

/** `HF_TOKEN`, `OPENAI_API_KEY`, `AWS_SECRET`, `DB_PASSWORD`: environment-style names (upper case). */
const ENV_SECRET_NAME = /^(?:[A-Z0-9_]*_)?(?:TOKEN|KEY|SECRET|PASSWORD|PASSWD)$/;
/** `api_key`, `admin-api-key`, `client_secret`, `ssl-keyfile-password`, `hf_token` in any case; not `eos_token`. */
const ANY_CASE_SECRET_NAME =
  /^(?:(?:[a-z0-9]+[_-])*(?:api[_-]?key|secret|password|passwd)|(?:[a-z0-9]+[_-])*(?:hf|hub|access|auth|api|bearer|refresh|session|github|gh)[_-]?token|token)$/i;

/** True for a variable, key or flag name (without its dashes) whose value is a secret. */
export function isSecretName(name: string): boolean {
  return ENV_SECRET_NAME.test(name) || ANY_CASE_SECRET_NAME.test(name);
}

/** Values that say "no secret here": left as they are so `api_key=None` still reads as None. */
function isEmptyMarker(value: string): boolean {
  return /^(?:None|null|undefined|\*\*\*)$/.test(value);
}

/** Keeps the quotes of a quoted value, masks its content. */
function maskValue(value: string): string {
  if (value.startsWith('\\"')) return `\\"${MASK}\\"`;
  const q = value[0];
  if (q === '"' || q === "'") return `${q}${MASK}${q}`;
  // A bare value keeps the punctuation that ends it in prose or a repr: `api_key=None,`, `HF_TOKEN=x.`
  const [, word, tail] = /^(.*?)([,;.)\]}]*)$/s.exec(value) ?? [value, value, ''];
  return isEmptyMarker(word) ? value : MASK + tail;
}

// A value: \"...\" (inside a JSON string), "...", '...', or a bare word up to a space or quote.
const VALUE = String.raw`(?:\\"(?:[^"\\\n]|\\[^"\n])*\\"|"(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[^\s'"\\]+)`;

/**
 * Masks the value that follows each match of `head`. `head` consumes the name and separator
 * only, and captures the value in a lookahead group `value`, so a name that is not secret
 * consumes nothing beyond itself (`Environment=HF_TOKEN=x`: HF_TOKEN is still seen).
 */
function maskAfter(text: string, head: RegExp, isSecret: (m: RegExpExecArray) => boolean): string {
  const re = new RegExp(head.source, head.flags.includes('g') ? head.flags : head.flags + 'g');
  let out = '';
  let copied = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const value = m.groups?.['value'];
    const end = m.index + m[0].length;
    if (value === undefined || !isSecret(m)) {
      if (m[0].length === 0) re.lastIndex++;
      continue;
    }
    out += text.slice(copied, end) + maskValue(value);
    copied = end + value.length;
    re.lastIndex = copied;
  }
  return out + text.slice(copied);
}

/** `"--api-key=K L"` / `"HF_TOKEN=K L"` (systemd's quoted assignment): the value runs to the closing quote. */
const QUOTED_ASSIGNMENT = /(["'])(--?)?([A-Za-z_][\w-]*)=((?:(?!\1)[^\n])*)\1/g;

/** `--api-key K`, `--api-key=K`, also across a `\`-continued line of a unit file. */
const FLAG = new RegExp(
  String.raw`(?<![\w-])--?(?<name>[A-Za-z0-9][\w-]*)(?:=|[ \t]+(?:\\\r?\n[ \t]*)?)(?!--)(?=(?<value>${VALUE}))`,
  'gm',
);

/** `["--api-key", "K"]` (an argv written as JSON or a Python list). */
const FLAG_IN_LIST = /(["'])(--?)([A-Za-z0-9][\w-]*)\1(\s*,\s*)(["'])(?!--)((?:(?!\5)[^\\\n]|\\.)*)\5/g;

/** `HF_TOKEN=V`, `export OPENAI_API_KEY='V'`, `api_key='V'` (Python repr). */
const ASSIGNMENT = new RegExp(String.raw`(?<![\w.$-])(?<name>[A-Za-z_][A-Za-z0-9_]*)=(?=(?<value>${VALUE}))`, 'gm');

/** `"api_key": "V"`, `'HF_TOKEN': 'V'` (JSON, Python dicts). */
const KEYED = /(["'])([A-Za-z_][\w-]*)\1(\s*:\s*)(["'])((?:(?!\4)[^\\\n]|\\.)*)\4/g;

/** `Authorization: Bearer K`, `"authorization": "Basic K"`, `header = "Authorization: Bearer K"`. */
const AUTHORIZATION =
  /((?:proxy-)?authorization["']?\s*[:=]\s*["']?\s*)((?:bearer|basic|token|digest)\s+)?([^\s"'\\,;]+)/gi;

/** `X-Api-Key: K` header lines. */
const API_KEY_HEADER = /(?<![\w-])((?:[\w-]+-)?api[-_]?key\s*:\s*)([^\s"'\\,;]+)/gim;

function maskQuotedAssignments(text: string): string {
  return text.replace(QUOTED_ASSIGNMENT, (all, q: string, dashes: string | undefined, name: string, value: string) =>
    isSecretName(name) && value !== '' && value !== MASK ? `${q}${dashes ?? ''}${name}=${MASK}${q}` : all,
  );
}

function maskFlags(text: string): string {
  const named = (m: RegExpExecArray): boolean => isSecretName(m.groups?.['name'] ?? '');
  return maskAfter(text, FLAG, named).replace(
    FLAG_IN_LIST,
    (all, q: string, dashes: string, name: string, comma: string, vq: string) =>
      isSecretName(name) ? `${q}${dashes}${name}${q}${comma}${vq}${MASK}${vq}` : all,
  );
}

function maskAssignments(text: string): string {
  return maskAfter(text, ASSIGNMENT, (m) => isSecretName(m.groups?.['name'] ?? ''));
}

function maskKeyed(text: string): string {
  return text.replace(KEYED, (all, q: string, name: string, colon: string, vq: string, value: string) => {
    if (/^(?:proxy-)?authorization$/i.test(name)) return all; // the scheme stays: see maskAuthorization
    return isSecretName(name) && value !== '' ? `${q}${name}${q}${colon}${vq}${MASK}${vq}` : all;
  });
}

function maskAuthorization(text: string): string {
  return text
    .replace(AUTHORIZATION, (_all, head: string, scheme: string | undefined) => `${head}${scheme ?? ''}${MASK}`)
    .replace(API_KEY_HEADER, (_all, head: string, value: string) => `${head}${isEmptyMarker(value) ? value : MASK}`);
}

/** Every literal occurrence of a known secret (the API key in use), whatever surrounds it. */
function maskKnown(text: string, known: readonly string[]): string {
  let out = text;
  // Longest first, so a key that contains another is masked whole; very short values would mask ordinary text.
  for (const value of [...known].filter((v) => v.length >= 4).sort((a, b) => b.length - a.length)) {
    out = out.split(value).join(MASK);
  }
  return out;
}

/**
 * Replaces secret values with `***` and changes nothing else. `known` are values to mask
 * wherever they appear (e.g. the API key the extension uses).
 */
export function maskSecrets(text: string, known: readonly string[] = []): string {
  const steps = [maskQuotedAssignments, maskFlags, maskAssignments, maskKeyed, maskAuthorization];
  return steps.reduce((t, step) => step(t), maskKnown(text, known));
}
