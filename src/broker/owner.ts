/**
 * The owner's side of the broker: the peers of this machine connect here, get every server's
 * snapshot at once and each event of the owner's fleet as it happens, and have their verbs run
 * by the owner's fleet (the restart through its one door, the restart rule, with the questions
 * asked back in the peer that asked).
 */
import type * as net from 'node:net';
import type { ServerProfile } from '../config/config';
import type {
  FleetEvent,
  ParserVerification,
  RestartOptions,
  RestartAnswer,
  ServerSnapshot,
} from '../fleet/fleetTypes';
import type { RestartQuestions } from '../fleet/restart/restartVerb';
import type { LoadForecast } from '../monitor/loadInsights';
import type { WatchOutcome } from '../monitor/watchTypes';
import { errorText } from '../util/errors';
import { FocusTarget, OWNER_PEER } from './focus';
import { LineSocket } from './lineSocket';
import {
  encode,
  parseClientMessage,
  PROTOCOL_VERSION,
  type Choice,
  type ClientMessage,
  type OwnerMessage,
  type Question,
} from './protocol';
import { toWireError, toWireEvent, toWireSnapshot } from './wire';

/** The owner's own fleet, its verbs as they run here (not through the broker). */
export interface OwnerFleet {
  server(name: string): ServerProfile | undefined;
  snapshots(): ServerSnapshot[];
  snapshot(server: ServerProfile): ServerSnapshot;
  watchAll(skip: (server: ServerProfile) => boolean): string[];
  attach(server: ServerProfile, quiet: boolean): Promise<WatchOutcome | undefined>;
  restartAsking(server: ServerProfile, options: RestartOptions & RestartQuestions): Promise<RestartAnswer | undefined>;
  stop(server: ServerProfile, reason: string): boolean;
  verifyParsers(server: ServerProfile, log: (line: string) => void): Promise<ParserVerification>;
  connect(server: ServerProfile): Promise<unknown>;
  forecast(server: ServerProfile): Promise<LoadForecast>;
}

interface Peer {
  readonly id: number;
  readonly line: LineSocket;
  welcomed: boolean;
  readonly asks: Map<number, (value: boolean | Choice | undefined) => void>;
}

export class BrokerOwner {
  private readonly peers = new Map<number, Peer>();
  private readonly focus = new FocusTarget();
  private nextPeer = OWNER_PEER + 1;
  private nextAsk = 1;
  private closed = false;

  constructor(
    private readonly fleet: OwnerFleet,
    private readonly log: (level: 'info' | 'warn', message: string) => void,
    ownFocus: boolean,
  ) {
    this.focus.report(OWNER_PEER, ownFocus);
  }

  get peerCount(): number {
    return this.peers.size;
  }

  /** The owner's own window tells its user (it was focused last, or no peer ever was). */
  notifiesHere(): boolean {
    return this.focus.target() === OWNER_PEER;
  }

  ownFocus(focused: boolean): void {
    this.focus.report(OWNER_PEER, focused);
  }

  accept(socket: net.Socket): void {
    if (this.closed) return void socket.destroy();
    const id = this.nextPeer++;
    const line = new LineSocket(
      socket,
      (text) => this.receive(peer, text),
      () => this.left(peer),
    );
    const peer: Peer = { id, line, welcomed: false, asks: new Map() };
    this.peers.set(id, peer);
  }

  /** An event of the owner's fleet, to every peer (the one to tell its user marked). */
  broadcast(event: FleetEvent): void {
    const wire = toWireEvent(event);
    if (!wire) return;
    const snapshot = toWireSnapshot(this.fleet.snapshot(event.server));
    const target = this.focus.target();
    for (const peer of this.peers.values())
      if (peer.welcomed) this.send(peer, { t: 'event', event: wire, snapshot, notify: peer.id === target });
  }

  private send(peer: Peer, message: OwnerMessage): void {
    peer.line.send(encode(message));
  }

  private left(peer: Peer): void {
    this.peers.delete(peer.id);
    this.focus.left(peer.id);
    for (const resolve of peer.asks.values()) resolve(undefined);
    peer.asks.clear();
  }

  private receive(peer: Peer, text: string): void {
    let message: ClientMessage;
    try {
      message = parseClientMessage(text);
    } catch (error) {
      this.log('warn', `Broker: a peer sent an invalid message (${errorText(error)}): disconnected.`);
      return peer.line.close();
    }
    if (!peer.welcomed && message.t !== 'hello') return peer.line.close();
    switch (message.t) {
      case 'hello':
        return this.hello(peer, message);
      case 'focus':
        return this.focus.report(peer.id, message.focused);
      case 'watchAll': {
        const wanted = new Set(message.names);
        this.fleet.watchAll((s) => !wanted.has(s.name));
        return;
      }
      case 'answer':
        peer.asks.get(message.id)?.(message.value);
        peer.asks.delete(message.id);
        return;
      case 'call':
        return void this.call(peer, message);
    }
  }

  private hello(peer: Peer, message: Extract<ClientMessage, { t: 'hello' }>): void {
    if (message.v !== PROTOCOL_VERSION) {
      this.send(peer, {
        t: 'refuse',
        v: PROTOCOL_VERSION,
        reason: `the window that shares the watches speaks broker protocol ${PROTOCOL_VERSION}, this one ${message.v} (another version of the extension)`,
      });
      return peer.line.close();
    }
    peer.welcomed = true;
    this.focus.report(peer.id, message.focused);
    const snapshots = this.fleet.snapshots().map(toWireSnapshot);
    this.send(peer, { t: 'welcome', v: PROTOCOL_VERSION, peer: peer.id, snapshots });
    this.log('info', `Broker: process ${message.pid} shares this window's watches (${this.peers.size} now).`);
  }

  private ask(peer: Peer, call: number, question: Question, reason?: string): Promise<boolean | Choice | undefined> {
    const id = this.nextAsk++;
    return new Promise((resolve) => {
      peer.asks.set(id, resolve);
      this.send(peer, { t: 'ask', id, call, question, ...(reason !== undefined ? { reason } : {}) });
    });
  }

  private async call(peer: Peer, message: Extract<ClientMessage, { t: 'call' }>): Promise<void> {
    const { id, verb } = message;
    const reply = (value?: unknown) => this.send(peer, { t: 'reply', id, ok: true, value });
    const outcome = (done: Promise<WatchOutcome | undefined>) =>
      void done.then(
        (o) => this.send(peer, { t: 'outcome', id, ...(o ? { outcome: JSON.parse(JSON.stringify(o)) } : {}) }),
        () => this.send(peer, { t: 'outcome', id }),
      );
    try {
      const server = message.server !== undefined ? this.fleet.server(message.server) : undefined;
      if (!server) throw new Error(`no server "${message.server ?? ''}" in the settings of the window that watches`);
      switch (verb) {
        case 'attach':
          reply();
          return outcome(this.fleet.attach(server, message.quiet === true));
        case 'stop':
          return reply(this.fleet.stop(server, 'stopped by the user'));
        case 'connect':
          await this.fleet.connect(server);
          return reply();
        case 'forecast':
          return reply(JSON.parse(JSON.stringify(await this.fleet.forecast(server))));
        case 'verify':
          return reply(await this.fleet.verifyParsers(server, (line) => this.send(peer, { t: 'log', call: id, line })));
        case 'restart': {
          const asks = message.asks ?? [];
          const result = await this.fleet.restartAsking(server, {
            ...(message.force !== undefined ? { force: message.force } : {}),
            ...(message.issueTimeoutMs !== undefined ? { issueTimeoutMs: message.issueTimeoutMs } : {}),
            ...(asks.includes('choose')
              ? { choose: async (reason) => ((await this.ask(peer, id, 'choose', reason)) as Choice) ?? 'cancel' }
              : {}),
            ...(asks.includes('confirm')
              ? { confirm: async () => (await this.ask(peer, id, 'confirm')) === true }
              : {}),
          });
          if (!result) return reply(null);
          reply(
            result.kind === 'restarted'
              ? { kind: result.kind, issued: result.issued }
              : { kind: result.kind, reason: result.reason },
          );
          return outcome(result.outcome);
        }
      }
    } catch (error) {
      this.send(peer, { t: 'reply', id, ok: false, error: toWireError(error) });
    }
  }

  /** The owner leaves: every peer sees its connection close (one of them takes over). */
  close(): void {
    this.closed = true;
    for (const peer of this.peers.values()) peer.line.destroy();
    this.peers.clear();
  }
}
