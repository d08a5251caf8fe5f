/** The HTTP witness: /health each round (or less while the port is seen closed), then the completion that proves ready. */
import { judgeCompletion, judgeHealth } from '../engine/httpAnswers';
import { wantsCompletionProbe } from './loadVerdict';
import { HEALTH_BACKSTOP_ROUNDS, COMPLETION_PROMPT } from './watchTypes';
import { SamplerFollow } from './samplerFollow';

export abstract class HttpProbe extends SamplerFollow {
  /** The sampler round (its time) before which /health answered although the port looked closed. */
  private answeredWhileClosedAt: number | undefined;

  protected async probeHttp(): Promise<void> {
    const state = this.current;
    if (state.failure) return;
    if (this.deps.options.servesHttp === false) {
      const graphs = state.cudaGraphBatches;
      if (
        state.readyAt === undefined &&
        state.mainPid !== undefined &&
        state.connected &&
        graphs &&
        graphs.done >= graphs.total
      ) {
        this.apply({
          kind: 'completion',
          at: this.now(),
          ok: true,
          detail: 'this rank finished loading (it serves no HTTP: node rank 0 does)',
        });
      }
      return;
    }
    if (this.mode === 'steady') {
      const steady = this.deps.options.steadyIntervalMs ?? 0;
      if (this.now() - this.lastHealthAt < steady && state.healthFailures === 0) return;
    } else if ((this.portSeenClosed() || this.portOwnerPending()) && this.healthSkipped < HEALTH_BACKSTOP_ROUNDS - 1) {
      this.healthSkipped++;
      return;
    }
    this.healthSkipped = 0;
    const closedBefore = this.portSeenClosed();
    const sampledBefore = this.port?.at;
    this.lastHealthAt = this.now();
    const health = await this.deps.http.health();
    const at = this.now();
    if (closedBefore && health.kind === 'http') {
      // Twice, with a sampler round between: a socket opened between two rounds (a stand-in's
      // too) is named by the next round before its answers count.
      if (this.answeredWhileClosedAt === undefined || sampledBefore === this.answeredWhileClosedAt) {
        this.answeredWhileClosedAt = sampledBefore;
        this.healthSkipped = HEALTH_BACKSTOP_ROUNDS - 1;
        return;
      }
      this.portWitnessTrusted = false;
      this.deps.log(
        'info',
        `/health answered while no socket listened on its port in the host's view (another network namespace?): /health is asked every round.`,
      );
    }
    if (health.kind === 'refused')
      this.apply({ kind: 'http', at, result: 'refused', detail: 'port closed (connection refused)' });
    else if (health.kind === 'http') {
      const judged = judgeHealth(health.status);
      const result = judged === 'ok' ? 'healthy' : judged === 'warming' ? 'warming' : 'error';
      this.apply({ kind: 'http', at, result, detail: `/health ${health.status}` });
    } else
      this.apply({
        kind: 'http',
        at,
        result: 'error',
        detail: `/health ${health.kind}: ${'message' in health ? health.message : ''}`.trim(),
      });
    // A failing /health after ready: look at the process too (dead, or alive but unhealthy).
    if (this.mode === 'steady' && this.current.healthFailures > 0) this.unitProbeDue = true;

    if (wantsCompletionProbe(this.current)) await this.probeCompletion();
  }

  protected async probeCompletion(): Promise<void> {
    if (!this.modelName) {
      const models = await this.deps.http.models();
      if (!models.ok) {
        this.apply({ kind: 'completion', at: this.now(), ok: false, detail: `/v1/models: ${models.reason}` });
        return;
      }
      this.modelName = models.ids[0];
    }
    const response = await this.deps.http.completion(this.modelName ?? 'default', COMPLETION_PROMPT, 1);
    const at = this.now();
    if (response.kind !== 'http') {
      this.apply({
        kind: 'completion',
        at,
        ok: false,
        detail: response.kind === 'refused' ? 'connection refused' : response.kind,
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
    this.apply({
      kind: 'completion',
      at,
      ok: judged.ok,
      detail: judged.ok ? `1-token completion answered (${JSON.stringify(judged.text)})` : judged.reason,
    });
  }
}
