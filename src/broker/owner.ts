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
import type { LoadForecast } from '../monitor/forecast/loadInsights';
import { urlPort, type WatchOutcome } from '../monitor/watch/watchTypes';
import type { ExecOptions, ExecResult } from '../transport/transport';
import { printable } from '../config/text';
import { errorText } from '../util/errors';
import { LastFocused, OWNER_PEER } from './focus';
import { buildHostOp } from './hostOps';
import { LineSocket } from './lineSocket';
import {
  encode,
  MAX_SHARED_OUTPUT_BYTES,
  parseClientMessage,
  PROTOCOL_VERSION,
  type Choice,
  type ClientMessage,
  type OwnerMessage,
  type Question,
} from './protocol';
import type { FieldsOf, ReplyOf, Verb } from './verbs';
import { firstLine, serveTunnel } from './tunnel';
import { toWireError, toWireEvent, toWireSnapshot } from './wire';
import {
  answerTooLarge,
  noSuchServerThere,
  notTheServersUrl,
  otherExtensionVersion,
  otherProtocol,
  PEER_LEFT,
  refusedThere,
  callRefusedLine,
  peerDisconnectedLine,
  peerInvalidLine,
  peerJoinedLine,
} from '../present/words/brokerWords';
import { stoppedByUser } from '../present/words/watchWords';

/** The owner's own fleet, its verbs as they run here (not through the broker). */
export interface OwnerFleet {
  server(name: string): ServerProfile | undefined;
  snapshots(): ServerSnapshot[];
  snapshot(server: ServerProfile): ServerSnapshot;
  watchAll(skip: (server: ServerProfile) => boolean): string[];
  watch(server: ServerProfile, quiet: boolean): Promise<WatchOutcome | undefined>;
  /** This window's own kimiService.confirmRestart: whether a restart asks first, whoever asked for it. */
  confirmsRestarts(): boolean;
  restartAsking(server: ServerProfile, options: RestartOptions & RestartQuestions): Promise<RestartAnswer | undefined>;
  stop(server: ServerProfile, reason: string): boolean;
  verifyParsers(server: ServerProfile, log: (line: string) => void): Promise<ParserVerification>;
  connect(server: ServerProfile): Promise<unknown>;
  forecast(server: ServerProfile): Promise<LoadForecast>;
  /**
   * A command on the server's host (one this owner built: hostOps.ts), and a TCP stream from
   * there, over this fleet's own connection (the stream outside the watch's channel cap: a
   * client's chat may stream for minutes).
   */
  exec(server: ServerProfile, command: string, options: ExecOptions): Promise<ExecResult>;
  openStream(server: ServerProfile, host: string, port: number): Promise<NodeJS.ReadWriteStream>;
}

/** The host and port of a server's url: the one place a tunnel may lead to. */
function urlHostPort(url: string): { host: string; port: number | undefined } | undefined {
  try {
    return { host: new URL(url).hostname.replace(/^\[(.*)\]$/, '$1'), port: urlPort(url) };
  } catch {
    return undefined;
  }
}

/** Connections open at once (peers, tunnels, and those not past their first line): more are refused. */
export const MAX_CONNECTIONS = 64;
/** A connection's first line (a hello, a tunnel's request) comes within this, or it is dropped. */
export const FIRST_LINE_DEADLINE_MS = 5_000;

/** A verb as the owner runs it: the reply's value, and the outcome of a watch it started. */
type Handler<V extends Verb> = (
  peer: Peer,
  call: number,
  server: ServerProfile,
  fields: FieldsOf<V>,
) => Promise<{ readonly value: ReplyOf<V>; readonly outcome?: Promise<WatchOutcome | undefined> }>;

interface Peer {
  readonly id: number;
  readonly line: LineSocket;
  welcomed: boolean;
  readonly asks: Map<number, (value: boolean | Choice | undefined) => void>;
  /** A peer's commands run one after the other: one that reads nothing holds one output, not many. */
  commands: Promise<unknown>;
}

export class BrokerOwner {
  private readonly peers = new Map<number, Peer>();
  private readonly tunnels = new Set<net.Socket>();
  private readonly connections = new Set<net.Socket>();
  private readonly focus = new LastFocused();
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
    return this.focus.teller() === OWNER_PEER;
  }

  ownFocus(focused: boolean): void {
    this.focus.report(OWNER_PEER, focused);
  }

  /** A new connection: a peer (its hello first) or a tunnel (its request first). */
  accept(socket: net.Socket): void {
    if (this.closed || this.connections.size >= MAX_CONNECTIONS) return void socket.destroy();
    this.connections.add(socket);
    socket.on('close', () => this.connections.delete(socket));
    const deadline = setTimeout(() => socket.destroy(), FIRST_LINE_DEADLINE_MS);
    firstLine(socket, (line, read) => {
      clearTimeout(deadline);
      if (line === undefined || this.closed) return void socket.destroy();
      let message: ClientMessage | undefined;
      try {
        message = parseClientMessage(line);
      } catch {
        message = undefined;
      }
      if (message?.t === 'tunnel') return this.tunnel(socket, message, read.rest);
      // A peer's line connection reads its hello again from the start.
      socket.unshift(read.all);
      this.peer(socket);
    });
  }

  private tunnel(socket: net.Socket, message: Extract<ClientMessage, { t: 'tunnel' }>, rest: Buffer): void {
    this.tunnels.add(socket);
    socket.on('close', () => this.tunnels.delete(socket));
    serveTunnel(socket, rest, async () => {
      if (message.v !== PROTOCOL_VERSION) throw new Error(otherProtocol(message.v, PROTOCOL_VERSION));
      const server = this.fleet.server(message.server);
      if (!server) throw new Error(noSuchServerThere(message.server));
      const to = urlHostPort(server.url);
      if (!to || to.host !== message.host || to.port !== message.port)
        throw new Error(notTheServersUrl(message.host, message.port, server.name));
      return this.fleet.openStream(server, message.host, message.port);
    });
  }

  private peer(socket: net.Socket): void {
    const id = this.nextPeer++;
    const line = new LineSocket(
      socket,
      (text) => this.receive(peer, text),
      (why) => this.left(peer, why),
    );
    const peer: Peer = { id, line, welcomed: false, asks: new Map(), commands: Promise.resolve() };
    this.peers.set(id, peer);
  }

  /** An event of the owner's fleet, to every peer (the one to tell its user marked). */
  broadcast(event: FleetEvent): void {
    const wire = toWireEvent(event);
    if (!wire) return;
    const snapshot = toWireSnapshot(this.fleet.snapshot(event.server));
    const teller = this.focus.teller();
    for (const peer of this.peers.values())
      if (peer.welcomed) this.send(peer, { t: 'event', event: wire, snapshot, notify: peer.id === teller });
  }

  private send(peer: Peer, message: OwnerMessage): void {
    peer.line.send(encode(message));
  }

  private left(peer: Peer, why: string | undefined): void {
    if (why !== undefined) this.log('info', peerDisconnectedLine(printable(why, 200)));
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
      // The peer's own words, cut and without line breaks: a log line is never theirs to write.
      this.log('warn', peerInvalidLine(printable(errorText(error), 200)));
      return peer.line.drop();
    }
    if (!peer.welcomed && message.t !== 'hello') return peer.line.drop();
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
        return void this.call(peer, message.id, message.verb, message.fields);
      case 'tunnel':
        return peer.line.drop();
    }
  }

  private hello(peer: Peer, message: Extract<ClientMessage, { t: 'hello' }>): void {
    if (message.v !== PROTOCOL_VERSION) {
      this.send(peer, {
        t: 'refuse',
        v: PROTOCOL_VERSION,
        reason: otherExtensionVersion(PROTOCOL_VERSION, message.v),
      });
      return peer.line.close();
    }
    peer.welcomed = true;
    this.focus.report(peer.id, message.focused);
    const snapshots = this.fleet.snapshots().map(toWireSnapshot);
    this.send(peer, { t: 'welcome', v: PROTOCOL_VERSION, peer: peer.id, snapshots });
    this.log('info', peerJoinedLine(message.pid, this.peers.size));
  }

  private ask(peer: Peer, call: number, question: Question, reason?: string): Promise<boolean | Choice | undefined> {
    const id = this.nextAsk++;
    return new Promise((resolve) => {
      peer.asks.set(id, resolve);
      this.send(peer, { t: 'ask', id, call, question, ...(reason !== undefined ? { reason } : {}) });
    });
  }

  /**
   * Each verb of the table (verbs.ts) as the owner runs it: its fields checked already, its
   * reply's value, and for a watch it started the promise of its outcome.
   */
  private readonly verbs: { readonly [V in Verb]: Handler<V> } = {
    watch: async (_peer, _id, server, fields) => ({
      value: undefined,
      outcome: this.fleet.watch(server, fields.quiet === true),
    }),
    stop: async (_peer, _id, server) => ({ value: this.fleet.stop(server, stoppedByUser()) }),
    connect: async (_peer, _id, server) => {
      await this.fleet.connect(server);
      return { value: undefined };
    },
    forecast: async (_peer, _id, server) => ({ value: await this.fleet.forecast(server) }),
    verify: async (peer, id, server) => ({
      value: await this.fleet.verifyParsers(server, (line) => this.send(peer, { t: 'log', call: id, line })),
    }),
    restart: async (peer, id, server, fields) => {
      // This window's own setting decides whether it asks first, whatever the peer says; the
      // question is put in the peer's window. A forced restart skips the rule's question: asked here.
      const confirms = this.fleet.confirmsRestarts();
      const confirm = async () => (await this.ask(peer, id, 'confirm')) === true;
      if (confirms && fields.force === true && !(await confirm())) return { value: null };
      const result = await this.fleet.restartAsking(server, {
        ...(fields.force !== undefined ? { force: fields.force } : {}),
        ...(fields.issueTimeoutMs !== undefined ? { issueTimeoutMs: fields.issueTimeoutMs } : {}),
        ...(fields.asks?.includes('choose')
          ? { choose: async (reason) => this.choice(await this.ask(peer, id, 'choose', reason)) }
          : {}),
        ...(confirms ? { confirm } : {}),
      });
      if (!result) return { value: null };
      const value =
        result.kind === 'restarted'
          ? { kind: result.kind, issued: result.issued }
          : { kind: result.kind, reason: result.reason };
      return { value, outcome: result.outcome };
    },
    host: async (peer, _id, server, fields) => {
      // Built here from this window's own entry for the server: a peer names the operation only.
      const built = buildHostOp(server, { ...fields, stdin: fields.stdin !== undefined });
      if ('refused' in built) throw this.refused(peer, built.refused);
      // Never more output than a reply may carry (one byte more says it was cut: tooLarge).
      const maxOutputBytes = Math.min(fields.maxOutputBytes ?? Infinity, MAX_SHARED_OUTPUT_BYTES + 1);
      // Each waits for the peer to have read the previous output: one that reads nothing
      // holds one output here, not one per command, and is dropped at the deadline.
      const run = peer.commands.then(async () => {
        if (!(await peer.line.drained())) throw new Error(PEER_LEFT);
        return this.fleet.exec(server, built.line, {
          ...(fields.timeoutMs !== undefined ? { timeoutMs: fields.timeoutMs } : {}),
          maxOutputBytes,
          ...(fields.stdin !== undefined ? { stdin: fields.stdin } : {}),
        });
      });
      peer.commands = run.catch(() => undefined);
      const result = await run;
      return {
        value: {
          stdout: result.stdout,
          stderr: result.stderr,
          code: result.code,
          ...(result.signal !== undefined ? { signal: result.signal } : {}),
        },
      };
    },
  };

  /** A call the owner will not run: said in its log (the peer's words cut), and the error of the reply. */
  private refused(peer: Peer, why: string): Error {
    this.log('warn', callRefusedLine(peer.id, printable(why, 300)));
    return new Error(refusedThere(why));
  }

  private choice(answer: boolean | Choice | undefined): Choice {
    return typeof answer === 'string' ? answer : 'cancel';
  }

  private async call<V extends Verb>(peer: Peer, id: number, verb: V, fields: FieldsOf<V>): Promise<void> {
    try {
      const server = this.fleet.server(fields.server);
      if (!server) throw new Error(noSuchServerThere(fields.server));
      const handler: Handler<V> = this.verbs[verb];
      const { value, outcome } = await handler(peer, id, server, fields);
      // Encoded once. A line over the limit would end the client's connection: a command's
      // output is said to be too large (the client runs it itself), anything else fails.
      const text = encode({ t: 'reply', id, ok: true, value });
      if (Buffer.byteLength(text) <= MAX_SHARED_OUTPUT_BYTES) peer.line.send(text);
      else if (verb === 'host') this.send(peer, { t: 'reply', id, ok: true, value: { tooLarge: true } });
      else throw new Error(answerTooLarge(verb));
      outcome?.then(
        (o) => this.send(peer, { t: 'outcome', id, ...(o ? { outcome: JSON.parse(JSON.stringify(o)) } : {}) }),
        () => this.send(peer, { t: 'outcome', id }),
      );
    } catch (error) {
      this.send(peer, { t: 'reply', id, ok: false, error: toWireError(error) });
    }
  }

  /** The owner leaves: every peer sees its connection close (one of them takes over). */
  close(): void {
    this.closed = true;
    for (const peer of this.peers.values()) peer.line.destroy();
    this.peers.clear();
    for (const tunnel of this.tunnels) tunnel.destroy();
    this.tunnels.clear();
  }
}
