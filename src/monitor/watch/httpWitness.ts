/** The HTTP witness: /health each round (or less while the port is seen closed), then the completion that proves ready. */
import { judgeCompletion, judgeHealth } from '../../engine/httpAnswers';
import { wantsCompletionProbe } from '../state/loadVerdict';
import { HEALTH_BACKSTOP_ROUNDS, COMPLETION_PROMPT } from './watchTypes';
import type { Witness, WitnessContext } from './witness';
import {
  healthTimedOut,
  healthWithoutListener,
  httpWaits,
  portClosedRefused,
  rankFinishedLoading,
} from '../../present/words/watchWords';
import { completionAnswered, completionRefused, modelsFailed } from '../../present/words/watchWords';

/** What the sampler saw of the server's port (samplerWitness.ts): /health is spared while nothing listens. */
export interface PortView {
  /** The sampler saw, this round or the last, that nothing listens on the port. */
  seenClosed(): boolean;
  /** The sampler watches the port but has not said yet who listens there. */
  ownerPending(): boolean;
  /** The time of the sampler's last look at the port. */
  sampledAt(): number | undefined;
  /** /health answered while the port looked closed (another network namespace): the port witness is not trusted any more. */
  distrust(): void;
}

export class HttpWitness implements Witness {
  /** The sampler round (its time) before which /health answered although the port looked closed. */
  private answeredWhileClosedAt: number | undefined;
  private healthSkipped = 0;
  private lastHealthAt = 0;
  private modelName: string | undefined;
  /** A /health that got no answer in time was said (once until one answers again). */
  private timeoutSaid = false;
  /** What was last said of a url that waits for the job's node (said once until it changes). */
  private nodeWaitSaid: string | undefined;

  constructor(
    private readonly ctx: WitnessContext,
    private readonly port: PortView,
  ) {}

  /** The load ended and the watch goes on: /health at the steady pace from now. */
  enterSteady(): void {
    this.lastHealthAt = this.ctx.now();
  }

  /** A new run of the server: its model is asked again. */
  newRun(): void {
    this.modelName = undefined;
  }

  stop(): void {}

  /** The node the target runs on now (a job's batch host): where a `{node}` url goes; a wait for one is said once. */
  setNode(node: string | undefined): void {
    const { deps } = this.ctx;
    deps.http.setNode(node);
    const waiting = deps.http.nodeProblem;
    if (waiting !== this.nodeWaitSaid && waiting !== undefined) deps.log('info', httpWaits(waiting));
    this.nodeWaitSaid = waiting;
  }

  async probe(): Promise<void> {
    const { ctx } = this;
    const { deps } = ctx;
    const state = ctx.state();
    if (state.failure) return;
    if (deps.options.servesHttp === false) {
      const graphs = state.cudaGraphBatches;
      if (
        state.readyAt === undefined &&
        state.mainPid !== undefined &&
        state.connected &&
        graphs &&
        graphs.done >= graphs.total
      ) {
        ctx.emit({
          kind: 'completion',
          at: ctx.now(),
          ok: true,
          detail: rankFinishedLoading(),
        });
      }
      return;
    }
    // A url that names the job's node: nothing is asked until the job has one (no probe to "{node}").
    if (deps.http.nodeProblem !== undefined) return;
    if (ctx.mode() === 'steady') {
      const steady = deps.options.steadyIntervalMs ?? 0;
      if (ctx.now() - this.lastHealthAt < steady && state.healthFailures === 0) return;
    } else if (
      !state.readyLogSeen &&
      (this.port.seenClosed() || this.port.ownerPending()) &&
      this.healthSkipped < HEALTH_BACKSTOP_ROUNDS - 1
    ) {
      this.healthSkipped++;
      return;
    }
    this.healthSkipped = 0;
    // The server's own ready line comes after its warm-up request to its own port: the port is its
    // own, and /health is asked at once rather than after the sampler's next look.
    const closedBefore = !state.readyLogSeen && this.port.seenClosed();
    const unconfirmed = closedBefore || (!state.readyLogSeen && this.port.ownerPending());
    const sampledBefore = this.port.sampledAt();
    this.lastHealthAt = ctx.now();
    const health = await deps.http.health();
    const at = ctx.now();
    // Bounded by the client's timeout: said, and counted as a failed /health (never as ready).
    if (health.kind === 'timeout' && !this.timeoutSaid) deps.log('warn', healthTimedOut(deps.http.baseUrl));
    this.timeoutSaid = health.kind === 'timeout';
    if (!unconfirmed) this.answeredWhileClosedAt = undefined;
    if (unconfirmed && health.kind === 'http') {
      // Held until a sampler round comes between: a socket opened since the sampler's last look
      // (a stand-in's too) is named by that round before its answers count.
      if (this.answeredWhileClosedAt === undefined || sampledBefore === this.answeredWhileClosedAt) {
        this.answeredWhileClosedAt = sampledBefore;
        this.healthSkipped = HEALTH_BACKSTOP_ROUNDS - 1;
        return;
      }
      if (!closedBefore) this.answeredWhileClosedAt = undefined;
    }
    if (closedBefore && health.kind === 'http') {
      this.port.distrust();
      deps.log('info', healthWithoutListener());
    }
    if (health.kind === 'refused') ctx.emit({ kind: 'http', at, result: 'refused', detail: portClosedRefused() });
    else if (health.kind === 'http') {
      const judged = judgeHealth(health.status);
      const result = judged === 'ok' ? 'healthy' : judged === 'warming' ? 'warming' : 'error';
      ctx.emit({ kind: 'http', at, result, detail: `/health ${health.status}` });
    } else
      ctx.emit({
        kind: 'http',
        at,
        result: 'error',
        detail: `/health ${health.kind}: ${'message' in health ? health.message : ''}`.trim(),
      });
    // A failing /health after ready: look at the process too (dead, or alive but unhealthy).
    if (ctx.mode() === 'steady' && ctx.state().healthFailures > 0) ctx.lookAtUnit(false);

    if (wantsCompletionProbe(ctx.state())) await this.probeCompletion();
  }

  private async probeCompletion(): Promise<void> {
    const { ctx } = this;
    const { http } = ctx.deps;
    if (!this.modelName) {
      const models = await http.models();
      if (!models.ok) {
        ctx.emit({ kind: 'completion', at: ctx.now(), ok: false, detail: modelsFailed(models.reason) });
        return;
      }
      this.modelName = models.ids[0];
    }
    const response = await http.completion(this.modelName ?? 'default', COMPLETION_PROMPT, 1);
    const at = ctx.now();
    if (response.kind !== 'http') {
      ctx.emit({
        kind: 'completion',
        at,
        ok: false,
        detail: response.kind === 'refused' ? completionRefused() : response.kind,
      });
      return;
    }
    const judged = judgeCompletion(
      response.status,
      response.contentType,
      response.body,
      response.truncated,
      response.apiKeySent === true,
    );
    ctx.emit({
      kind: 'completion',
      at,
      ok: judged.ok,
      detail: judged.ok ? completionAnswered(JSON.stringify(judged.text)) : judged.reason,
    });
  }
}
