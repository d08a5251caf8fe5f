/**
 * The served model's own files, read from the GPU host for the chat model: its config.json
 * (does it take images?) and its tokenizer (exact token counts on this machine). The folder is
 * the `--model-path` of the server's command line (a container's: its path on the host). A
 * tokenizer file is read over the session's transport only when the local cache has no copy with
 * the host's checksum, and each distinct tokenizer is built once per process.
 */
import * as crypto from 'node:crypto';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { ServerProfile } from '../../config/config';
import { modelPathOf } from '../../engine/execStart';
import type { TokenizerFiles } from '../../engine/tokenizer/counter';
import { remembering, workerCounter, type TokenCounter } from '../../engine/tokenizer/workerCounter';
import {
  counterKey,
  imageSupport,
  listingCommand,
  MODEL_FILE_LIMITS,
  parseListing,
  readFileCommand,
  tokenizerFilesOf,
  type FolderListing,
  type ImageSupport,
  type ListedFile,
} from '../../engine/tokenizer/modelFolder';
import { targetFor, targetIo } from '../../target/target';
import type { Transport } from '../../transport/transport';
import {
  changedWhileRead,
  fileTooLarge,
  folderHasNoTokenizer,
  folderUnreadable,
  listingFailed,
  readFailed,
} from '../../present/words/modelWords';

const COMMAND_TIMEOUT_MS = 30_000;

/** Files by their sha256 on this machine. */
export interface BlobCache {
  get(sha256: string): Promise<string | undefined>;
  put(sha256: string, text: string): Promise<void>;
}

const sha256 = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

/** A folder of files named by their sha256 (checked again on each read). */
export function directoryCache(dir: string): BlobCache {
  return {
    async get(sum) {
      try {
        const text = await fsp.readFile(path.join(dir, sum), 'utf8');
        return sha256(text) === sum ? text : undefined;
      } catch {
        return undefined;
      }
    },
    async put(sum, text) {
      await fsp.mkdir(dir, { recursive: true });
      const tmp = path.join(dir, `${sum}.${process.pid}.tmp`);
      await fsp.writeFile(tmp, text, 'utf8');
      await fsp.rename(tmp, path.join(dir, sum));
    },
  };
}

/** ~/.cache/kimi-service/tokenizers (or under $XDG_CACHE_HOME). */
export function defaultTokenizerCacheDir(home: string, env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(home, '.cache');
  return path.join(base, 'kimi-service', 'tokenizers');
}

/** The model folder on the host: `--model-path` of the target's command line, when it is a local path. */
export async function modelFolderOf(transport: Transport, server: ServerProfile): Promise<string | undefined> {
  const state = await targetFor(server).readState(targetIo(transport, COMMAND_TIMEOUT_MS));
  const given = modelPathOf(state.argv);
  return given?.startsWith('/') ? state.hostPath(given) : undefined;
}

export interface ModelLook {
  readonly folder: string;
  readonly listing: FolderListing;
  readonly images: ImageSupport;
  /** The tokenizer files a counter is built from (empty: none in the folder). */
  readonly tokenizer: readonly ListedFile[];
}

export class ServedModelFiles {
  private readonly counters = new Map<string, Promise<TokenCounter>>();
  /** Bytes read from hosts, and files found in the cache instead (for the log and the tests). */
  readonly stats = { bytesRead: 0, filesRead: 0, cacheHits: 0 };

  constructor(private readonly cache: BlobCache) {}

  /** Ends the tokenizers' worker threads. */
  dispose(): void {
    for (const pending of this.counters.values())
      void pending.then(
        (c) => c.dispose(),
        () => undefined,
      );
    this.counters.clear();
  }

  /** One command: the folder's files with their checksums, and config.json. */
  async look(transport: Transport, folder: string, signal?: AbortSignal): Promise<ModelLook> {
    const result = await transport.exec(listingCommand(folder), {
      timeoutMs: COMMAND_TIMEOUT_MS,
      maxOutputBytes: MODEL_FILE_LIMITS['config.json'] + 64 * 1024,
      ...(signal ? { signal } : {}),
    });
    if (result.code !== 0) throw new Error(listingFailed(folder, result.stderr.trim(), result.code));
    const listing = parseListing(result.stdout);
    if (!listing.found) throw new Error(folderUnreadable(folder));
    return {
      folder,
      listing,
      images: imageSupport(listing.config),
      tokenizer: tokenizerFilesOf(listing),
    };
  }

  /** The counter of a look's tokenizer: from the cache or the host, built once per distinct tokenizer. */
  counter(transport: Transport, look: ModelLook, signal?: AbortSignal): Promise<TokenCounter> {
    if (look.tokenizer.length === 0) return Promise.reject(new Error(folderHasNoTokenizer(look.folder)));
    const key = counterKey(look.tokenizer);
    let pending = this.counters.get(key);
    if (!pending) {
      pending = this.build(transport, look, signal);
      this.counters.set(key, pending);
      pending.catch(() => this.counters.delete(key));
    }
    return pending;
  }

  private async build(transport: Transport, look: ModelLook, signal?: AbortSignal): Promise<TokenCounter> {
    const files: Record<string, string> = {};
    for (const file of look.tokenizer) files[file.name] = await this.fileText(transport, look.folder, file, signal);
    return remembering(await workerCounter(files as TokenizerFiles, sha256(counterKey(look.tokenizer))));
  }

  private async fileText(
    transport: Transport,
    folder: string,
    file: ListedFile,
    signal?: AbortSignal,
  ): Promise<string> {
    const cached = await this.cache.get(file.sha256);
    if (cached !== undefined) {
      this.stats.cacheHits++;
      return cached;
    }
    const limit = MODEL_FILE_LIMITS[file.name];
    if (file.bytes > limit) throw new Error(fileTooLarge(`${folder}/${file.name}`, file.bytes, limit));
    const result = await transport.exec(readFileCommand(folder, file.name), {
      timeoutMs: 120_000,
      maxOutputBytes: limit + 1,
      ...(signal ? { signal } : {}),
    });
    if (result.code !== 0) throw new Error(readFailed(`${folder}/${file.name}`, result.stderr.trim(), result.code));
    const text = result.stdout;
    if (sha256(text) !== file.sha256) throw new Error(changedWhileRead(`${folder}/${file.name}`));
    this.stats.bytesRead += Buffer.byteLength(text);
    this.stats.filesRead++;
    await this.cache.put(file.sha256, text).catch(() => undefined);
    return text;
  }
}
