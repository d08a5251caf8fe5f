/**
 * The chat model's token counts, made on this machine: the served model's own tokenizer, read
 * from the host once per model load (fleet/checks/servedModel.ts, cached by checksum), then counted
 * locally (engine/tokenizer). No remote call ever sits in a count: until the tokenizer is in,
 * counts are the stated estimate, and the log says once per server how counts are made.
 */
import * as os from 'node:os';
import * as vscode from 'vscode';
import type { ServerProfile } from '../../../config/config';
import type { FleetVerbs } from '../../../fleet/fleetVerbs';
import {
  defaultTokenizerCacheDir,
  directoryCache,
  modelFolderOf,
  ServedModelFiles,
  type ModelLook,
} from '../../../fleet/checks/servedModel';
import { estimateCounter } from '../../../engine/tokenizer/counter';
import { fromSync, type TokenCounter } from '../../../engine/tokenizer/workerCounter';
import type { FramedMessage, MessagePiece } from '../../../engine/tokenizer/framing';
import type { ImageSupport } from '../../../engine/tokenizer/modelFolder';
import { errorText } from '../../../util/errors';
import type { NeutralMessage } from './openaiChat';

const estimated = (why: string): TokenCounter => fromSync(estimateCounter(why));

type Log = Pick<vscode.LogOutputChannel, 'info' | 'warn' | 'debug'>;

interface Entry {
  counter: TokenCounter;
  look?: Promise<ModelLook | undefined>;
  /** The last "how" logged for this server. */
  said?: string;
  /** The folder could not be looked at: the next offer (refresh) tries again; counts do not. */
  failed?: boolean;
}

/** A neutral chat message as the tokenizer's framing sees it. */
export function framedMessage(message: NeutralMessage): FramedMessage {
  return {
    role: message.role,
    pieces: message.parts.flatMap((p): MessagePiece[] =>
      p.kind === 'image'
        ? [{ kind: 'image', bytes: p.data.length }]
        : p.kind === 'toolResult'
          ? [p, ...(p.images ?? []).map((i) => ({ kind: 'image' as const, bytes: i.data.length }))]
          : [p],
    ),
  };
}

export class ChatTokenCounts implements vscode.Disposable {
  private readonly servers = new Map<string, Entry>();
  private readonly subscription: { dispose(): void };

  constructor(
    private readonly fleet: FleetVerbs,
    private readonly log: Log,
    readonly files = new ServedModelFiles(directoryCache(defaultTokenizerCacheDir(os.homedir()))),
  ) {
    // A new load may serve another model: its files are looked at again (a cached tokenizer costs one listing).
    this.subscription = fleet.onEvent((event) => {
      if (event.type === 'state' && event.state.verdict !== 'ready') this.servers.delete(event.server.name);
    });
  }

  /**
   * The model's files looked at (one command on the host), and its tokenizer read in the
   * background. For the offer: whether the model takes images. Never throws.
   */
  async look(server: ServerProfile): Promise<ImageSupport> {
    const known = this.servers.get(server.name);
    if (known?.failed) {
      this.servers.delete(server.name);
      this.servers.set(server.name, this.fresh(server, known.said));
    }
    const look = await this.entry(server).look;
    return look?.images ?? { images: false, why: 'the model folder could not be read' };
  }

  /** Tokens of a text or a message for `server`: exact once its tokenizer is in, else estimated. Local only. */
  async count(
    server: ServerProfile,
    input: string | NeutralMessage,
    token?: vscode.CancellationToken,
  ): Promise<number> {
    if (token?.isCancellationRequested) throw new vscode.CancellationError();
    const counter = this.counterFor(server);
    const count = await (typeof input === 'string'
      ? counter.countText(input)
      : counter.countMessage(framedMessage(input)));
    if (token?.isCancellationRequested) throw new vscode.CancellationError();
    return count;
  }

  /** The estimate, for a model that is not offered (nothing to read). */
  estimate(input: string | NeutralMessage): Promise<number> {
    const counter = estimated('no server is offered under this model');
    return typeof input === 'string' ? counter.countText(input) : counter.countMessage(framedMessage(input));
  }

  /** The counter in use for `server` now (starts reading its tokenizer when nothing is known yet). */
  counterFor(server: ServerProfile): TokenCounter {
    return this.entry(server).counter;
  }

  /** Resolves once the server's tokenizer is in (or could not be had): for tests and the benchmark. */
  async ready(server: ServerProfile): Promise<TokenCounter> {
    const entry = this.entry(server);
    const look = await entry.look;
    if (look) await this.loading.get(server.name);
    return entry.counter;
  }

  dispose(): void {
    this.subscription.dispose();
    this.servers.clear();
    this.files.dispose();
  }

  private readonly loading = new Map<string, Promise<void>>();

  private entry(server: ServerProfile): Entry {
    let entry = this.servers.get(server.name);
    if (entry) return entry;
    entry = this.fresh(server);
    this.servers.set(server.name, entry);
    return entry;
  }

  private fresh(server: ServerProfile, said?: string): Entry {
    const fresh: Entry = {
      counter: estimated('the tokenizer is being read from the host'),
      ...(said !== undefined ? { said } : {}),
    };
    fresh.look = this.lookAt(server).then(
      (look) => {
        if (this.servers.get(server.name) !== fresh) return look;
        if (look.tokenizer.length === 0) {
          this.use(server, fresh, estimated(`${look.folder} has neither tiktoken.model nor tokenizer.json`));
          return look;
        }
        const loading = this.load(server, fresh, look);
        this.loading.set(server.name, loading);
        return look;
      },
      (error: unknown) => {
        fresh.failed = true;
        if (this.servers.get(server.name) === fresh)
          this.use(server, fresh, estimated(`the model folder could not be read (${errorText(error)})`));
        return undefined;
      },
    );
    return fresh;
  }

  private async lookAt(server: ServerProfile): Promise<ModelLook> {
    const session = await this.fleet.connect(server);
    const folder = await modelFolderOf(session.transport, server);
    if (!folder) throw new Error('the command line names no local --model-path');
    return this.files.look(session.transport, folder);
  }

  private async load(server: ServerProfile, entry: Entry, look: ModelLook): Promise<void> {
    const started = Date.now();
    try {
      const session = await this.fleet.connect(server);
      const counter = await this.files.counter(session.transport, look);
      if (this.servers.get(server.name) !== entry) return;
      this.use(server, entry, counter, ` (${Date.now() - started} ms to load)`);
    } catch (error) {
      if (this.servers.get(server.name) === entry)
        this.use(server, entry, estimated(`the tokenizer could not be read (${errorText(error)})`));
    }
  }

  private use(server: ServerProfile, entry: Entry, counter: TokenCounter, note = ''): void {
    entry.counter = counter;
    if (entry.said === counter.how) return;
    entry.said = counter.how;
    const line = `[${server.name}] Chat token counts ${counter.how}${note}.`;
    if (counter.exact) this.log.info(line);
    else this.log.warn(line);
  }
}
