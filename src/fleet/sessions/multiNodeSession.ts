/**
 * A multi-node server: one ServerSession per node (its own connection, its own watch of its
 * unit and journal), seen by the fleet as one session. A restart restarts every node's unit at
 * once; the server's state is folded from the nodes' (monitor/state/multiNodeState.ts). HTTP (readiness,
 * parser checks, completions) goes to node rank 0 only; the other ranks' watches follow their
 * unit and journal and count as ready once their load is done.
 */
import type { NodeProfile, ServerProfile } from '../../config/config';
import type { LoadPrior } from '../../monitor/eta/eta';
import { initialState } from '../../monitor/state/loadState';
import type { LoadState } from '../../monitor/state/loadStateTypes';
import { isFinished } from '../../monitor/state/loadVerdict';
import { AlreadyWatchingError, type ServerSession, type SessionListener } from '../../monitor/watch/session';
import type { WatchOptions, WatchOutcome } from '../../monitor/watch/watchTypes';
import { TransportError, type Transport } from '../../transport/transport';
import type { ServerHttpClient } from '../../engine/serverHttp';
import { foldNodeStates, nodeIssue } from '../../monitor/state/multiNodeState';
import { FleetError } from '../fleetError';
import { nodesWatchesEnded, otherNodeUnwatchable, serverLoadEnded, watchedAnew } from '../../present/words/fleetWords';
import { stoppedByUser } from '../../present/words/watchWords';

export interface NodeSession {
  readonly node: NodeProfile;
  readonly session: ServerSession;
}

/** A node's connection profile, as a ServerProfile its own ServerSession can use. */
export function nodeServerProfile(server: ServerProfile, node: NodeProfile): ServerProfile {
  return {
    name: `${server.name} ${node.label}`,
    host: node.host,
    port: node.port,
    username: node.username,
    identityFile: node.identityFile,
    unit: node.unit,
    url: server.url,
    urlHost: server.urlHost,
    urlPort: server.urlPort,
    sudo: server.sudo,
    ...(server.sshClient !== undefined ? { sshClient: server.sshClient } : {}),
  };
}

export class MultiNodeSession {
  private last: LoadState | undefined;
  private loadEnd: Promise<WatchOutcome> | undefined;
  private loading = false;
  private generation = 0;

  constructor(
    readonly profile: ServerProfile,
    readonly nodes: readonly NodeSession[],
  ) {
    if (nodes.length < 2) throw new FleetError('nodes', 'a multi-node server has at least two nodes');
  }

  private get rank0(): ServerSession {
    return this.nodes[0]!.session;
  }

  /** Rank 0's connection: the server's HTTP, parser checks and unit questions go there. */
  get transport(): Transport {
    return this.rank0.transport;
  }

  get client(): ServerHttpClient {
    return this.rank0.client;
  }

  get busy(): boolean {
    return this.loading && this.nodes.some((n) => n.session.busy || n.session.watching);
  }

  get watching(): boolean {
    return this.nodes.some((n) => n.session.watching);
  }

  get state(): LoadState | undefined {
    return foldNodeStates(this.nodeStates()) ?? this.last;
  }

  /** The server's state now, for an outcome: a fresh one when no node has said anything yet. */
  private stateNow(): LoadState {
    return this.state ?? this.rank0.state ?? initialState(Date.now());
  }

  nodeStates(): { label: string; host: string; state: LoadState | undefined }[] {
    return this.nodes.map(({ node, session }) => ({
      label: node.label,
      host: node.host ?? 'local',
      state: session.state,
    }));
  }

  /** Connects every node at once; a refusal names the node. */
  async connectAll(): Promise<void> {
    await Promise.all(
      this.nodes.map(async ({ node, session }) => {
        try {
          await session.transport.connect();
        } catch (error) {
          if (error instanceof TransportError) {
            const named = new TransportError(error.kind, `${node.label}: ${error.message}`);
            if (error.hostKeyChange) Object.assign(named, { hostKeyChange: error.hostKeyChange });
            throw named;
          }
          throw error;
        }
      }),
    );
  }

  /**
   * Restarts (or only watches) every node's unit at once, each over its own connection, and
   * watches them all; resolves with how the server's load ended: ready when every node is,
   * failed as soon as one node fails (naming it).
   */
  async watch(
    mode: 'restart' | 'watch',
    options: WatchOptions,
    listener: SessionListener = {},
    prior?: LoadPrior,
  ): Promise<WatchOutcome> {
    if (this.busy) throw new AlreadyWatchingError(this.profile.name, this.stateNow());
    const generation = ++this.generation;
    // The server's last load has ended (a node failed, say) while another node's watch still follows
    // its own load: the new watch replaces them all.
    for (const { session } of this.nodes) if (session.busy) session.stop(watchedAnew());
    this.loading = true;
    let previous = this.state;
    let settled = false;
    let closed = false;
    let resolveEnd!: (outcome: WatchOutcome) => void;
    const end = new Promise<WatchOutcome>((resolve) => (resolveEnd = resolve));
    this.loadEnd = end;
    const current = () => generation === this.generation;

    // While the nodes' watches start, a node not yet started still shows its last watch's state.
    let starting = true;
    const onNodeChange = () => {
      if (!current() || starting) return;
      const state = this.state;
      if (!state || state === previous) return;
      const before = previous ?? state;
      previous = state;
      this.last = state;
      listener.onState?.(state, before);
      checkEnd();
    };
    const endWith = (outcome: WatchOutcome) => {
      this.last = outcome.state;
      if (!settled) {
        settled = true;
        this.loading = false;
        resolveEnd(outcome);
      }
      listener.onEnd?.(outcome);
      if (!options.steadyIntervalMs) this.stopNodes(serverLoadEnded());
    };
    // The server's load ends when the folded state is final; each later change of that (a crash after ready) is an end too.
    let lastEndVerdict: string | undefined;
    const checkEnd = () => {
      const state = this.state;
      if (!state) return;
      // Stopped counts only when every node is (one stopped while others run is a transient or a broken group).
      const final =
        isFinished(state) &&
        (state.verdict !== 'stopped' || this.nodes.every((n) => n.session.state?.verdict === 'stopped'));
      if (!final) {
        lastEndVerdict = undefined;
        return;
      }
      const verdict = state.failure ? 'failed' : state.readyAt !== undefined ? 'ready' : 'stopped';
      if (verdict === lastEndVerdict) return;
      lastEndVerdict = verdict;
      endWith({ end: verdict, state, ...(state.failure ? { message: state.failure.summary } : {}) });
    };
    const nodeEnded = (outcome: WatchOutcome) => {
      if (!current()) return;
      // Ends that are not a state (the watch gave up on a node) end the server's watch, naming the node.
      if (outcome.end === 'timeout' || outcome.end === 'unreachable' || outcome.end === 'cancelled') {
        // The other nodes' watches, stopped because of this end (or by the user), say nothing new.
        if (settled && outcome.end === 'cancelled') return;
        const issue = nodeIssue(this.nodeStates());
        endWith({
          ...outcome,
          state: this.state ?? outcome.state,
          ...(outcome.message || issue ? { message: [issue?.text, outcome.message].filter(Boolean).join(': ') } : {}),
        });
        this.stopNodes(outcome.message ?? outcome.end);
        return;
      }
      checkEnd();
    };
    const nodeClosed = () => {
      if (!current() || closed) return;
      if (this.nodes.some((n) => n.session.watching)) return;
      closed = true;
      this.loading = false;
      if (!settled) {
        settled = true;
        resolveEnd({ end: 'cancelled', state: this.stateNow(), message: nodesWatchesEnded() });
      }
      listener.onClosed?.();
    };

    const watches = this.nodes.map(({ node, session }) =>
      session.watch(
        mode,
        // Only node rank 0 serves HTTP; the others are ready once their load is done.
        node.rank === 0 ? options : { ...options, servesHttp: false },
        {
          onState: onNodeChange,
          onEnd: nodeEnded,
          onAlert: (alert) => listener.onAlert?.({ ...alert, message: `${node.label}: ${alert.message}` }),
          onClosed: nodeClosed,
        },
        node.rank === 0 ? prior : undefined,
      ),
    );
    starting = false;
    onNodeChange();
    // A node whose watch could not start (a refusal): stop the others, the server's watch ends with its error.
    Promise.all(watches).catch((error: unknown) => {
      if (!current()) return;
      this.stopNodes(otherNodeUnwatchable());
      if (!settled) {
        settled = true;
        this.loading = false;
        resolveEnd({
          end: 'unreachable',
          state: this.stateNow(),
          message: error instanceof Error ? error.message : String(error),
        });
      }
    });
    return end;
  }

  whenLoadEnds(): Promise<WatchOutcome | undefined> {
    return this.busy && this.loadEnd ? this.loadEnd : Promise.resolve(undefined);
  }

  private stopNodes(reason: string): void {
    for (const { session } of this.nodes) session.stop(reason);
  }

  stop(reason?: string): boolean {
    const any = this.watching;
    this.stopNodes(reason ?? stoppedByUser());
    return any;
  }

  dispose(): void {
    this.generation++;
    for (const { session } of this.nodes) session.dispose();
  }
}
