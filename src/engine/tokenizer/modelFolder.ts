/**
 * What is read from a model folder for the chat model, and how (pure: commands and parsers).
 * One listing command gives each known file's size and sha256 and config.json's text; a file is
 * then read only when this machine has no copy with that checksum. Every path is validated and
 * quoted; every read is bounded.
 */
import { assertAbsolutePath, quote } from '../../transport/shell';
import * as words from '../../present/words/tokenizerWords';

/** The files read, with the most of each that is read (Kimi's tiktoken.model: 2.8 MB; a tokenizer.json: up to ~20 MB). */
export const MODEL_FILE_LIMITS = {
  'config.json': 1 << 20,
  'tokenizer_config.json': 4 << 20,
  'tiktoken.model': 16 << 20,
  'tokenizer.json': 48 << 20,
} as const;

export type ModelFileName = keyof typeof MODEL_FILE_LIMITS;
export const MODEL_FILE_NAMES = Object.keys(MODEL_FILE_LIMITS) as ModelFileName[];

export interface ListedFile {
  readonly name: ModelFileName;
  readonly bytes: number;
  readonly sha256: string;
}

export interface FolderListing {
  readonly found: boolean;
  readonly files: readonly ListedFile[];
  /** config.json's text, when it is there and within its limit. */
  readonly config?: string;
}

const CONFIG_MARK = '--- config.json';

/** Lists the folder's known files (`F NAME BYTES SHA256`), then config.json's text after a mark. */
export function listingCommand(folder: string): string {
  const dir = quote(assertAbsolutePath(folder, 'model folder'));
  const names = MODEL_FILE_NAMES.join(' ');
  return (
    `cd -- ${dir} 2>/dev/null || { echo NOFOLDER; exit 0; }; ` +
    `for f in ${names}; do if [ -f "$f" ] && [ -r "$f" ]; then ` +
    `printf 'F %s %s %s\\n' "$f" "$(wc -c < "$f" | tr -d ' ')" "$(sha256sum < "$f" | cut -d' ' -f1)"; fi; done; ` +
    `if [ -f config.json ]; then echo ${quote(CONFIG_MARK)}; head -c ${MODEL_FILE_LIMITS['config.json']} config.json; fi`
  );
}

export function parseListing(stdout: string): FolderListing {
  if (stdout.startsWith('NOFOLDER')) return { found: false, files: [] };
  const at = stdout.indexOf(`${CONFIG_MARK}\n`);
  const head = at < 0 ? stdout : stdout.slice(0, at);
  const files: ListedFile[] = [];
  for (const line of head.split('\n')) {
    const m = /^F (\S+) (\d+) ([0-9a-f]{64})$/.exec(line.trim());
    if (m && (MODEL_FILE_NAMES as string[]).includes(m[1]!))
      files.push({ name: m[1] as ModelFileName, bytes: Number(m[2]), sha256: m[3]! });
  }
  const config = at < 0 ? undefined : stdout.slice(at + CONFIG_MARK.length + 1);
  const listed = files.find((f) => f.name === 'config.json');
  return {
    found: true,
    files,
    ...(config !== undefined && listed && listed.bytes <= MODEL_FILE_LIMITS['config.json'] ? { config } : {}),
  };
}

/** Reads one file of the folder, at most its limit (+1 byte, so a file that grew is noticed). */
export function readFileCommand(folder: string, name: ModelFileName): string {
  const path = `${assertAbsolutePath(folder, 'model folder').replace(/\/+$/, '')}/${name}`;
  return `head -c ${MODEL_FILE_LIMITS[name] + 1} -- ${quote(path)}`;
}

/** The tokenizer files a counter is built from: tiktoken.model (with its config) first, else tokenizer.json. */
export function tokenizerFilesOf(listing: FolderListing): ListedFile[] {
  const of = (name: ModelFileName) => listing.files.find((f) => f.name === name);
  const config = of('tokenizer_config.json');
  const main = of('tiktoken.model') ?? of('tokenizer.json');
  return main ? [main, ...(config ? [config] : [])] : [];
}

/** What identifies a tokenizer: the checksums of the files it is built from. */
export function counterKey(files: readonly ListedFile[]): string {
  return files.map((f) => `${f.name}:${f.sha256}`).join(',');
}

export interface ImageSupport {
  readonly images: boolean;
  readonly why: string;
}

/** Whether the model takes images, from its config.json: a vision tower's config. */
export function imageSupport(configText: string | undefined): ImageSupport {
  if (configText === undefined) return { images: false, why: words.noReadableConfig() };
  let config: Record<string, unknown>;
  try {
    config = JSON.parse(configText) as Record<string, unknown>;
  } catch {
    return { images: false, why: words.configNotJson() };
  }
  for (const key of ['vision_config', 'vision_tower_config', 'mm_vision_tower', 'vision_tower']) {
    if (config[key] !== undefined && config[key] !== null) return { images: true, why: words.configHas(key) };
  }
  const text = config.text_config as Record<string, unknown> | undefined;
  if (text && (config.image_token_id !== undefined || config.media_placeholder_token_id !== undefined))
    return { images: true, why: words.configNamesImageToken() };
  return { images: false, why: words.noVisionTower() };
}
