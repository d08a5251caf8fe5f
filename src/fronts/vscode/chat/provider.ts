/**
 * The verified server as a chat model in the editor (Language Model Chat Provider, VS Code
 * 1.104+): each server that is `ready` with its parsers verified is offered ("Kimi K2.6 on
 * gpu1"). Requests go to the server's /v1/chat/completions through the fleet's session (the one
 * verified SSH connection: no port opened), streamed; the translation lives in ./openaiChat.
 * When the server leaves `ready` the model is withdrawn and a request in flight ends with an
 * error naming the state.
 */
import * as vscode from 'vscode';
import type { ServerProfile } from '../../../config/config';
import type { FleetEvent } from '../../../fleet/fleetTypes';
import type { FrontFleet } from '../../../fleet/fleetVerbs';
import { errorText } from '../../../util/errors';
import { buildChatRequest, ChatStreamError, type NeutralMessage, type OpenAiMessage } from './openaiChat';
import { answersToolResult, ChatTurn } from './chatTurn';
import { ReasoningMemory } from './toolChainReasoning';
import { raceAbort } from './abort';
import {
  contextLength,
  describeChatModel,
  engineName,
  offerFor,
  parseModels,
  serverNameOf,
  type Capabilities,
  type CheckOutcome,
} from './modelInfo';
import { imageCount, imageRefusal } from './imageParts';
import { neutralMessage } from './chatParts';
import { readAnswer } from './chatStream';
import { serverIs, stateSoon } from './serverLeft';
import { ChatTokenCounts } from './tokenCounter';
import { verifyParsersWhenReadySetting } from '../settings/settingsSource';
import { modelListAnswer, SERVERS_VIEW_FOCUS } from './providerGroups';

/** contributes.languageModelChatProviders[].vendor */
export const CHAT_VENDOR = 'kimi-service';
/** A stream that sends nothing for this long is given up (the server's state is checked meanwhile). */
const IDLE_TIMEOUT_MS = 300_000;
/** After a dropped connection: how long to wait for the watch to see the server go down. */
const STATE_AFTER_ERROR_MS = 5_000;

/** Since VS Code 1.120 a third-party model is in the picker only with isUserSelectable (older versions ignore it). */
export type KimiChatInformation = vscode.LanguageModelChatInformation & { readonly isUserSelectable?: boolean };

export interface ChatModelSettings {
  /** kimiService.chatModel.enabled */
  enabled(): boolean;
  /** kimiService.chatModel.maxOutputTokens */
  maxOutputTokens(): number;
  /** kimiService.verifyParsersWhenReady: a server found ready at the first look is verified for the chat model. */
  verifyWhenReady(): boolean;
}

export const vscodeChatModelSettings: ChatModelSettings = {
  enabled: () => vscode.workspace.getConfiguration('kimiService').get<boolean>('chatModel.enabled', true) !== false,
  maxOutputTokens: () =>
    vscode.workspace.getConfiguration('kimiService').get<number>('chatModel.maxOutputTokens', 16_384),
  verifyWhenReady: () => verifyParsersWhenReadySetting(),
};

type Log = Pick<vscode.LogOutputChannel, 'info' | 'warn' | 'error' | 'debug' | 'trace'>;

interface Offered {
  readonly server: ServerProfile;
  readonly modelId: string;
  readonly info: KimiChatInformation;
  readonly capabilities: Capabilities;
}

/** Why a request in flight was cut off by the extension. */
class Withdrawn extends Error {}

export class KimiChatProvider implements vscode.LanguageModelChatProvider<KimiChatInformation>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeLanguageModelChatInformation = this.changed.event;
  private readonly checks = new Map<string, readonly CheckOutcome[]>();
  private readonly offers = new Map<string, Offered>();
  /** Why each server is not offered (for the error of a request to a withdrawn model). */
  private readonly notOffered = new Map<string, string>();
  private readonly inFlight = new Map<string, Set<AbortController>>();
  /** Token counts made here, with the served model's own tokenizer (./tokenCounter). */
  readonly tokens: ChatTokenCounts;
  /** Per server: whether its model takes images, and why (its config.json). */
  private readonly images = new Map<string, string>();
  private readonly refreshing = new Map<string, Promise<void>>();
  /** The reasoning of answers that ended in tool calls, sent back with them (interleaved thinking). */
  private readonly reasoning = new ReasoningMemory();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly fleet: FrontFleet,
    private readonly log: Log,
    private readonly settings: ChatModelSettings = vscodeChatModelSettings,
  ) {
    this.tokens = new ChatTokenCounts(fleet, log);
    this.disposables.push(
      this.changed,
      this.tokens,
      this.fleet.onEvent((event) => this.onFleetEvent(event)),
    );
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('kimiService.chatModel')) {
          this.log.info(
            `Chat model ${this.settings.enabled() ? `on: ${this.offers.size} server(s) offered` : 'turned off (kimiService.chatModel.enabled)'}.`,
          );
          for (const offer of this.offers.values()) void this.refresh(offer.server);
          this.changed.fire();
        }
      }),
    );
  }

  /** The models offered now (what provideLanguageModelChatInformation answers). */
  models(): KimiChatInformation[] {
    return this.settings.enabled() ? [...this.offers.values()].map((o) => o.info) : [];
  }

  /** `options` also carries a group's `configuration` in VS Code 1.109+ (./providerGroups). */
  provideLanguageModelChatInformation(options?: vscode.PrepareLanguageModelChatModelOptions): KimiChatInformation[] {
    const answer = modelListAnswer(
      options,
      this.fleet.servers.map((s) => s.name),
    );
    if (answer.list === 'all') return this.models();
    if ('problem' in answer) {
      // Not silent: the user has just added or edited the group, so the servers view is where to go.
      if (options?.silent === false) void vscode.commands.executeCommand(SERVERS_VIEW_FOCUS);
      throw new Error(answer.problem);
    }
    return [];
  }

  async provideLanguageModelChatResponse(
    model: KimiChatInformation,
    messages: readonly vscode.LanguageModelChatRequestMessage[],
    options: vscode.ProvideLanguageModelChatResponseOptions,
    progress: vscode.Progress<vscode.LanguageModelResponsePart>,
    token: vscode.CancellationToken,
  ): Promise<void> {
    const offer = this.offerOf(model);
    const { server } = offer;
    const neutral = messages.map(toNeutralMessage);
    const refusal = imageRefusal(
      imageCount(neutral),
      model.name,
      offer.info.capabilities.imageInput === true,
      this.images.get(server.name),
    );
    if (refusal) throw new Error(refusal);
    // Cancellation holds from the first await on (the SSH session may take seconds to come up).
    const abort = new AbortController();
    const running = this.inFlight.get(server.name) ?? new Set<AbortController>();
    this.inFlight.set(server.name, running);
    running.add(abort);
    const cancel = token.onCancellationRequested(() => abort.abort(new vscode.CancellationError()));
    if (token.isCancellationRequested) abort.abort(new vscode.CancellationError());
    const request = buildChatRequest({
      model: offer.modelId,
      messages: neutral,
      tools: (options.tools ?? []).map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: t.inputSchema,
      })),
      toolMode: options.toolMode === vscode.LanguageModelChatToolMode.Required ? 'required' : 'auto',
      maxTokens: offer.info.maxOutputTokens,
      ...(options.modelOptions ? { modelOptions: options.modelOptions } : {}),
    });
    const history = this.reasoning.attach(server.name, request.messages as OpenAiMessage[]);
    const body = { ...request, messages: history.messages };
    let idle: NodeJS.Timeout | undefined;
    const touch = () => {
      clearTimeout(idle);
      idle = setTimeout(
        () =>
          abort.abort(
            new Withdrawn(
              `${model.name}: no answer from the server for ${IDLE_TIMEOUT_MS / 1000} s; the request was given up.`,
            ),
          ),
        IDLE_TIMEOUT_MS,
      );
    };
    const started = Date.now();
    const { repair, parallelToolCalls } = offer.capabilities;
    const afterToolResult = answersToolResult(history.messages);
    const turn = new ChatTurn(
      {
        reasoningInContent:
          repair === 'always' || (repair === 'afterToolResult' && afterToolResult) ? 'beforeEnd' : 'leading',
        singleCall: !parallelToolCalls,
      },
      (part) =>
        progress.report(
          part.kind === 'text'
            ? new vscode.LanguageModelTextPart(part.text)
            : new vscode.LanguageModelToolCallPart(part.callId, part.name, part.input),
        ),
    );
    try {
      touch();
      const session = await raceAbort(this.fleet.sessionFor(server), abort.signal);
      const result = await session.client.postStream('/v1/chat/completions', JSON.stringify(body), abort.signal);
      await readAnswer(result, model.name, turn, touch);
      turn.end();
      this.reasoning.remember(server.name, history.messages, turn.toolCalls, turn.reasoning);
      if (turn.reasoning) this.log.trace(`[${server.name}] chat reasoning: ${turn.reasoning}`);
      const carried = history.carried.length
        ? `; reasoning sent back on the tool chain: ${history.carried.join(', ')} characters`
        : '';
      this.log.info(
        `[${server.name}] chat: ${messages.length} message(s), ${options.tools?.length ?? 0} tool(s)${carried} -> ${turn.finishReason ?? 'end of stream'} in ${((Date.now() - started) / 1000).toFixed(1)} s: ` +
          `${turn.summary()}, not shown (log level Trace shows it)`,
      );
    } catch (error) {
      let reason: unknown = abort.signal.aborted ? abort.signal.reason : undefined;
      if (reason instanceof vscode.CancellationError) throw reason;
      // A connection that dropped because the server went down: say what the server is now.
      if (reason === undefined && !(error instanceof ChatStreamError)) {
        const left = await stateSoon(this.fleet, server, STATE_AFTER_ERROR_MS);
        if (left) reason = new Withdrawn(`${model.name} stopped answering: ${left} (${errorText(error)})`);
      }
      const message =
        reason instanceof Error
          ? reason.message
          : error instanceof ChatStreamError
            ? `${model.name}: ${error.message}`
            : `${model.name}: ${errorText(error)}`;
      this.log.warn(`[${server.name}] chat request failed: ${message}`);
      throw new Error(message);
    } finally {
      clearTimeout(idle);
      cancel.dispose();
      running.delete(abort);
    }
  }

  /** Counted here with the model's own tokenizer (no remote call); estimated until it is read. */
  async provideTokenCount(
    model: KimiChatInformation,
    text: string | vscode.LanguageModelChatRequestMessage,
    token?: vscode.CancellationToken,
  ): Promise<number> {
    const input = typeof text === 'string' ? text : toNeutralMessage(text);
    const offer = this.offers.get(serverNameOf(model.id));
    if (!offer) return this.tokens.estimate(input);
    return this.tokens.count(offer.server, input, token);
  }

  dispose(): void {
    for (const set of this.inFlight.values())
      for (const abort of set) abort.abort(new Withdrawn('The Kimi extension was shut down.'));
    for (const d of this.disposables) d.dispose();
  }

  private offerOf(model: KimiChatInformation): Offered {
    const name = serverNameOf(model.id);
    if (!this.settings.enabled())
      throw new Error(`${model.name} is turned off (setting kimiService.chatModel.enabled).`);
    const offer = this.offers.get(name);
    if (!offer)
      throw new Error(
        `${model.name} is not available: ${this.notOffered.get(name) ?? `no server named ${name} is ready`}.`,
      );
    return offer;
  }

  private onFleetEvent(event: FleetEvent): void {
    const name = event.server.name;
    switch (event.type) {
      case 'verified':
        this.checks.set(name, event.checks);
        void this.refresh(event.server);
        break;
      case 'state':
        // Back from unhealthy (no load, so no end of a load to verify after): verify again here.
        if (event.state.verdict === 'ready' && event.previous.verdict === 'unhealthy')
          this.verifyInBackground(event.server);
        if (event.state.verdict !== 'ready') {
          // A new load (or a fault) needs a new verification before the model is offered again.
          this.checks.delete(name);
          this.withdraw(event.server, serverIs(event.state));
        }
        break;
      case 'end':
        // A server found ready at a quiet first look (the window opened on it) was never verified here.
        if (event.quiet && event.outcome.end === 'ready') this.verifyInBackground(event.server);
        break;
      default:
        break;
    }
  }

  /** The parser check the chat model needs, when nobody else runs it (the controller does after a load). */
  private verifyInBackground(server: ServerProfile): void {
    const name = server.name;
    if (this.checks.has(name) || !this.settings.enabled() || !this.settings.verifyWhenReady()) return;
    void this.fleet
      .verifyParsers(server, (line) => this.log.info(`[${name}] ${line}`))
      .catch((error) => this.log.warn(`[${name}] Parser check for the chat model failed: ${errorText(error)}`));
  }

  /** Offers or withdraws a server after a verification (one look at its models and limits). */
  private refresh(server: ServerProfile): Promise<void> {
    const pending = this.refreshing.get(server.name);
    if (pending) return pending.then(() => this.refresh(server));
    const run = this.doRefresh(server).finally(() => this.refreshing.delete(server.name));
    this.refreshing.set(server.name, run);
    return run;
  }

  private async doRefresh(server: ServerProfile): Promise<void> {
    const snapshot = this.fleet.snapshot(server);
    const offer = offerFor(snapshot.state?.verdict, this.checks.get(server.name));
    if (!offer.offered) return this.withdraw(server, offer.why);
    try {
      const session = await this.fleet.sessionFor(server);
      const models = await session.client.request('GET', '/v1/models');
      // No answer at all (a timeout, a refused port) says nothing of the models: an offer stays
      // while the watch says ready, and goes when its state does (with the state's words).
      if (models.kind !== 'http' && this.offers.has(server.name)) {
        this.log.warn(`[${server.name}] Chat model kept: GET /v1/models did not answer (${models.kind}).`);
        return;
      }
      const served = models.kind === 'http' && models.status === 200 ? parseModels(safeJson(models.body)) : [];
      const model = served[0];
      if (!model) return this.withdraw(server, 'GET /v1/models named no model');
      const info = await session.client.serverInfo();
      const images = await this.tokens.look(server);
      this.images.set(server.name, images.why);
      const context = contextLength(model, info.ok ? info.info : undefined);
      const d = describeChatModel({
        serverName: server.name,
        modelId: model.id,
        context,
        maxOutput: this.settings.maxOutputTokens(),
        capabilities: offer,
        engine: engineName(model.ownedBy, info.ok),
      });
      // The state may have moved on while we asked.
      if (this.fleet.snapshot(server).state?.verdict !== 'ready')
        return this.withdraw(server, `the server is ${this.fleet.snapshot(server).state?.verdict ?? 'not watched'}`);
      const before = this.offers.get(server.name);
      this.offers.set(server.name, {
        server,
        modelId: model.id,
        capabilities: offer,
        info: {
          id: d.id,
          name: d.name,
          family: d.family,
          version: d.version,
          detail: d.detail,
          tooltip: d.tooltip,
          maxInputTokens: d.maxInputTokens,
          maxOutputTokens: d.maxOutputTokens,
          capabilities: { toolCalling: d.toolCalling, imageInput: images.images },
          isUserSelectable: true,
        },
      });
      this.notOffered.delete(server.name);
      if (JSON.stringify(before?.info) !== JSON.stringify(this.offers.get(server.name)?.info)) {
        this.log.info(
          `[${server.name}] Chat model offered: ${d.name} (context ${context ?? 'unknown'} tokens, answers up to ${d.maxOutputTokens}, tool calling ${d.toolCalling ? 'on' : 'off'}, parallel calls ${offer.parallelToolCalls ? 'on' : 'off'}, images ${images.images ? 'on' : 'off'}: ${images.why}).${offer.notes.length ? ` ${offer.notes.join(' ')}` : ''}`,
        );
        this.changed.fire();
      }
    } catch (error) {
      this.withdraw(server, `its models could not be read: ${errorText(error)}`);
    }
  }

  private withdraw(server: ServerProfile, why: string): void {
    this.notOffered.set(server.name, why);
    const offer = this.offers.get(server.name);
    if (offer) {
      this.offers.delete(server.name);
      this.log.info(`[${server.name}] Chat model withdrawn: ${why}.`);
      this.changed.fire();
    }
    for (const abort of this.inFlight.get(server.name) ?? []) {
      abort.abort(new Withdrawn(`${offer?.info.name ?? `Kimi on ${server.name}`} stopped answering: ${why}.`));
    }
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function toNeutralMessage(message: vscode.LanguageModelChatRequestMessage): NeutralMessage {
  const role =
    message.role === vscode.LanguageModelChatMessageRole.Assistant
      ? 'assistant'
      : message.role === vscode.LanguageModelChatMessageRole.User
        ? 'user'
        : 'system';
  return neutralMessage(role, message.content);
}
