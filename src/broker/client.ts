/**
 * A peer's side of the broker: the hello (refused by an owner of another version), the owner's
 * snapshots and events, and calls to the owner's fleet with their replies, outcomes, questions
 * and log lines. A closed connection ends every call (the owner left: one peer takes over).
 */
import type * as net from 'node:net';
import { errorText } from '../util/errors';
import { LineSocket } from './lineSocket';
import {
  encode,
  parseOwnerMessage,
  PROTOCOL_VERSION,
  type Choice,
  type ClientMessage,
  type Question,
  type ReceivedEvent,
  type ReceivedOwnerMessage,
  type WireError,
  type WireSnapshot,
} from './protocol';
import type { WatchOutcome } from '../monitor/watch/watchTypes';
import { hasOutcome, parseReply, type FieldsOf, type ReplyOf, type Verb } from './verbs';
import * as words from '../present/words/brokerWords';

export interface ClientHandlers {
  onEvent(event: ReceivedEvent, snapshot: WireSnapshot, notify: boolean): void;
  /** The connection ended (`why`: what went wrong, if anything). */
  onClose(why: string | undefined): void;
}

export interface CallHooks {
  readonly ask?: (question: Question, reason: string | undefined) => Promise<boolean | Choice>;
  readonly log?: (line: string) => void;
}

/** A call's answer: `reply` the verb's value (checked), `outcome` how the watch it started ended (watch, restart). */
export interface Call<V extends Verb = Verb> {
  readonly reply: Promise<ReplyOf<V>>;
  readonly outcome: Promise<WatchOutcome | undefined>;
}

interface Pending {
  readonly hooks: CallHooks;
  /** `resolve` checks the value against the verb's reply schema first. */
  readonly reply: { resolve(v: unknown): void; reject(e: WireError): void };
  readonly outcome: (o: WatchOutcome | undefined) => void;
}

/** A call's failure: the owner's error as it came (wire.ts makes it the error this peer's fronts know). */
export class CallFailed extends Error {
  constructor(readonly wire: WireError) {
    super(wire.message);
  }
}

/** Thrown by `BrokerClient.join`: the owner speaks another version (its reason). */
export class BrokerRefused extends Error {}

/**
 * Thrown by `BrokerClient.join`: the connection closed before the owner's welcome (it was
 * leaving, or was killed while the connect sat in its listen queue). Worth claiming again.
 */
export class BrokerGone extends Error {}

/** How long a joining peer waits for the owner's welcome before it tries again. */
const WELCOME_TIMEOUT_MS = 15_000;

export class BrokerClient {
  private readonly line: LineSocket;
  private readonly pending = new Map<number, Pending>();
  private nextCall = 1;
  private welcome?: (m: Extract<ReceivedOwnerMessage, { t: 'welcome' }>) => void;
  /** Until the welcome: the join's rejection (a refusal, or the connection gone). */
  private fail?: (error: Error) => void;
  private handlers?: ClientHandlers;
  private open = true;

  constructor(socket: net.Socket) {
    this.line = new LineSocket(
      socket,
      (text) => this.receive(text),
      (why) => this.closed(why),
    );
  }

  /** Hello, and the owner's welcome: its snapshots of every server. */
  join(pid: number, focused: boolean, handlers: ClientHandlers): Promise<readonly WireSnapshot[]> {
    return new Promise((resolve, reject) => {
      if (!this.open) return reject(new BrokerGone(words.closedBeforeHello()));
      // An owner that accepts but never welcomes (its process hangs) is not waited on for ever.
      const timer = setTimeout(() => this.line.close(words.noWelcome()), WELCOME_TIMEOUT_MS);
      this.welcome = (m) => {
        clearTimeout(timer);
        this.handlers = handlers;
        this.fail = undefined;
        resolve(m.snapshots);
      };
      this.fail = (error) => {
        clearTimeout(timer);
        reject(error);
      };
      this.send({ t: 'hello', v: PROTOCOL_VERSION, pid, focused });
    });
  }

  focus(focused: boolean): void {
    this.send({ t: 'focus', focused });
  }

  watchAll(names: readonly string[]): void {
    this.send({ t: 'watchAll', names });
  }

  call<V extends Verb>(verb: V, fields: FieldsOf<V>, hooks: CallHooks = {}): Call<V> {
    const id = this.nextCall++;
    let resolveOutcome!: (o: WatchOutcome | undefined) => void;
    const outcome = new Promise<WatchOutcome | undefined>((r) => (resolveOutcome = r));
    const reply = new Promise<ReplyOf<V>>((resolve, reject) => {
      const checked = (value: unknown) => {
        try {
          resolve(parseReply(verb, value, (why) => new Error(why)));
        } catch (error) {
          reject(
            new CallFailed({
              message: words.answeredSomethingElse(verb, errorText(error)),
            }),
          );
          this.line.close(words.answerNotOne(verb));
        }
      };
      this.pending.set(id, {
        hooks,
        reply: { resolve: checked, reject: (e) => reject(new CallFailed(e)) },
        outcome: resolveOutcome,
      });
    });
    // A watch's or restart's pending entry lives until its outcome; the others end with their reply.
    reply.then(
      () => {
        if (!hasOutcome(verb)) this.pending.delete(id);
      },
      () => {
        this.pending.delete(id);
        resolveOutcome(undefined);
      },
    );
    if (!this.open) this.pending.get(id)?.reply.reject({ message: words.brokerConnectionClosed() });
    else this.send({ t: 'call', id, verb, fields });
    return { reply, outcome };
  }

  private send(message: ClientMessage): void {
    this.line.send(encode(message));
  }

  private receive(text: string): void {
    let message: ReceivedOwnerMessage;
    try {
      message = parseOwnerMessage(text);
    } catch (error) {
      this.line.close(words.ownerSentInvalid(errorText(error)));
      return;
    }
    switch (message.t) {
      case 'welcome':
        if (message.v !== PROTOCOL_VERSION) return this.line.close(words.ownerSpeaksProtocol(message.v));
        return this.welcome?.(message);
      case 'refuse':
        this.fail?.(new BrokerRefused(message.reason));
        this.fail = undefined;
        return this.line.close(message.reason);
      case 'event':
        return this.handlers?.onEvent(message.event, message.snapshot, message.notify);
      case 'reply': {
        const pending = this.pending.get(message.id);
        if (message.ok) pending?.reply.resolve(message.value);
        else pending?.reply.reject(message.error);
        return;
      }
      case 'outcome':
        this.pending.get(message.id)?.outcome(message.outcome);
        this.pending.delete(message.id);
        return;
      case 'ask': {
        const hooks = this.pending.get(message.call)?.hooks;
        const answer = hooks?.ask
          ? hooks.ask(message.question, message.reason)
          : Promise.resolve(message.question === 'confirm' ? false : ('cancel' as const));
        void answer.then(
          (value) => this.send({ t: 'answer', id: message.id, value }),
          () => this.send({ t: 'answer', id: message.id, value: message.question === 'confirm' ? false : 'cancel' }),
        );
        return;
      }
      case 'log':
        return this.pending.get(message.call)?.hooks.log?.(message.line);
    }
  }

  private closed(why: string | undefined): void {
    this.open = false;
    this.fail?.(new BrokerGone(why ?? words.closedBeforeWelcome()));
    this.fail = undefined;
    for (const pending of this.pending.values()) {
      pending.reply.reject({ message: words.watcherClosed() });
      pending.outcome(undefined);
    }
    this.pending.clear();
    this.handlers?.onClose(why);
  }

  close(): void {
    this.line.destroy();
  }
}
