/**
 * Faults, bad input, concurrency and secrets against a real sshd and the simulated GPU host
 *. The core story (ready, a crash mid-load, unknown/changed host keys, an error body
 * containing "choices", empty choices, HTML 500, truncated JSON, wrong content type) is in
 * monitor.int.test.ts and is not repeated here.
 *
 * Every case asserts what the user would see (the verdict, the message) and that nothing leaks
 * once the session is disposed:
 *  - on the host: no `journalctl -f` of ours still running (checked with `ps` inside the
 *    simulated host's namespaces; the follow is killed by process group on dispose);
 *  - in this process: the active resources (process.getActiveResourcesInfo()) come back to
 *    what they were before the case. See `resourceGrowth` for the tolerance and why.
 */
import { forFront } from '../../src/present/hints';
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseSettings } from '../../src/config/parseSettings';
import type { RawSettings } from '../../src/config/config';
import type { LoadState, Verdict } from '../../src/monitor/state/loadStateTypes';
import { AlreadyWatchingError } from '../../src/monitor/watch/session';
import type { WatchOptions, WatchOutcome } from '../../src/monitor/watch/watchTypes';
import { hashHostName } from '../../src/transport/ssh/knownHosts';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { FAST_WATCH, markHost, sessionForHost, type TestSession } from './simHost';
import { waitFor } from '../util/waitFor';
import { disposed } from '../util/disposed';
import { freePort } from '../util/freePort';

// ---------------------------------------------------------------- helpers

type Fixture = TestSession;

/** The extension's own session for a simulated host (see simHost.ts). */
const fixture = sessionForHost;

/** Verdicts in order (runs collapsed), with the time each was first entered. */
function recorder() {
  const verdicts: Verdict[] = [];
  const entered: { verdict: Verdict; at: number; state: LoadState }[] = [];
  return {
    verdicts,
    entered,
    onState(state: LoadState) {
      if (verdicts[verdicts.length - 1] !== state.verdict) {
        verdicts.push(state.verdict);
        entered.push({ verdict: state.verdict, at: Date.now(), state });
      }
    },
    firstAt(v: Verdict): number | undefined {
      return entered.find((e) => e.verdict === v)?.at;
    },
  };
}

/** `journalctl` processes running inside the simulated host (ours follow with -f). */
async function remoteJournals(host: GpuHost): Promise<string[]> {
  const r = await host.nsExec('ps -eo pid=,args=');
  return r.stdout.split('\n').filter((l) => /journalctl(\.js)? .*-f/.test(l));
}

async function waitNoRemoteJournal(host: GpuHost, ms = 8000): Promise<void> {
  let left: string[] = [];
  await waitFor(
    async () => {
      left = await remoteJournals(host);
      return left.length === 0;
    },
    { timeoutMs: ms, intervalMs: 100, message: 'no journalctl of ours on the host' },
  ).catch(() => assert.fail(`journalctl still running on the host after dispose:\n${left.join('\n')}`));
}

function resourceCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of process.getActiveResourcesInfo()) counts.set(r, (counts.get(r) ?? 0) + 1);
  return counts;
}

/**
 * Active resources that grew between two snapshots. Tolerance, and why:
 *  - `Timeout`: up to 2 more. Mocha's own per-test timer and the harness's `run()` timeout of
 *    an nsExec that may still be closing belong to the test machinery, not the extension.
 *  - `ProcessWrap`/`PipeWrap`: ignored when the case restarts sshd (a new nsenter child with
 *    its stderr pipe replaces the killed one: the harness's, not ours); else up to 1 more for a
 *    harness nsExec still closing.
 *  - Everything else (TCPSocketWrap = SSH connections, FSReqCallback, TTYWrap, ...): none.
 * Sampled repeatedly for up to 5 s, because closing a socket or a child takes a few ticks (more
 * on a busy machine).
 */
async function resourceGrowth(before: Map<string, number>, opts: { sshdRestarted?: boolean } = {}): Promise<string[]> {
  const tolerance = (kind: string): number => {
    if (kind === 'Timeout') return 2;
    if (kind === 'ProcessWrap' || kind === 'PipeWrap') return opts.sshdRestarted ? Infinity : 1;
    return 0;
  };
  let grown: string[] = [];
  await waitFor(
    () => {
      const after = resourceCounts();
      grown = [...after]
        .filter(([kind, n]) => n - (before.get(kind) ?? 0) > tolerance(kind))
        .map(([kind, n]) => `${kind}: ${before.get(kind) ?? 0} -> ${n}`);
      return grown.length === 0;
    },
    { timeoutMs: 5000, intervalMs: 100, message: 'the active resources to come back' },
  ).catch(() => undefined);
  return grown;
}

/** Disposes the fixture, then checks both leak conditions. */
async function disposeAndCheck(
  fx: Fixture | undefined,
  host: GpuHost,
  before: Map<string, number>,
  opts: { sshdRestarted?: boolean; hosts?: GpuHost[] } = {},
) {
  fx?.dispose();
  for (const h of opts.hosts ?? [host]) await waitNoRemoteJournal(h);
  const grown = await resourceGrowth(before, opts);
  assert.deepEqual(grown, [], `active handles grew after dispose: ${grown.join(', ')}`);
}

/** Epoch ms of the last systemd "Main process exited" line of the unit's journal. */
async function exitLineAt(host: GpuHost): Promise<{ at: number; msg: string } | undefined> {
  const entries = await host.journalEntries();
  for (let i = entries.length - 1; i >= 0; i--) {
    if (entries[i].pid === 1 && /Main process exited/.test(entries[i].msg))
      return { at: Math.floor(entries[i].t / 1000), msg: entries[i].msg };
  }
  return undefined;
}

const FAST_SIM = {
  readMBps: 60,
  warmReadMBps: 60,
  warmupSeconds: 0.5,
  kvSeconds: 0.2,
  cudaGraphSeconds: 0.4,
  initSeconds: 0.2,
};

// ---------------------------------------------------------------- the suite

describe('faults, bad input, concurrency and secrets (real sshd + simulated GPU host)', function () {
  this.timeout(120_000);
  let host: GpuHost;
  let fx: Fixture | undefined;
  let baseline: Map<string, number>;

  before(async () => {
    host = await startGpuHost({ shards: 12, shardBytes: 2 * 1024 * 1024, sim: { ...FAST_SIM, coldFiles: 'all' } });
  });
  beforeEach(async () => {
    if (!host.sshdRunning()) await host.startSshd();
    await host.configureSimulator({ ...FAST_SIM, fault: {} });
    baseline = resourceCounts();
  });
  afterEach(() => {
    // Only when a case failed before its own check: never leave a session behind.
    fx?.dispose();
    fx = undefined;
  });
  after(() => host?.stop());

  // ------------------------------------------------------------ network

  describe('network', () => {
    it('the connection drops mid-load: unreachable while down, never ready/failed; back to the load after the reconnect, then ready', async () => {
      // ~16 s of weights: time to drop the link for 3 s and come back mid-load.
      await host.configureSimulator({ readMBps: 1.5, warmReadMBps: 1.5 });
      fx = await fixture(host);
      const rec = recorder();
      let dropped = false;
      let progressAtDrop = 0;
      let phaseAtDrop: string | undefined;
      let restoredAt = 0;
      const whileDown: Verdict[] = [];
      let afterReconnect: LoadState | undefined;
      const outcome = await fx.session.watch('restart', FAST_WATCH, {
        onState: (s) => {
          rec.onState(s);
          if (dropped && restoredAt === 0) whileDown.push(s.verdict);
          if (restoredAt > 0 && s.connected && afterReconnect === undefined && s.verdict !== 'unreachable')
            afterReconnect = s;
          if (!dropped && s.shards && s.shards.done >= 3) {
            dropped = true;
            progressAtDrop = s.progress ?? 0;
            phaseAtDrop = s.phase;
            void (async () => {
              await host.stopSshd();
              // The link stays down until the watch has said so, then comes back (mid-load).
              await waitFor(() => whileDown.includes('unreachable'), {
                timeoutMs: 30_000,
                message: 'unreachable while sshd is down',
              }).catch(() => undefined);
              await host.startSshd();
              restoredAt = Date.now();
            })();
          }
        },
      });
      assert.equal(outcome.end, 'ready', `ended ${outcome.end}: ${outcome.message}\n${fx.logLines.join('\n')}`);
      assert.ok(whileDown.includes('unreachable'), `verdicts while sshd was down: ${whileDown}`);
      assert.ok(!whileDown.includes('ready') && !whileDown.includes('failed'), `verdicts while down: ${whileDown}`);
      assert.ok(!rec.verdicts.includes('failed'), `verdicts: ${rec.verdicts}`);
      // Back to the load, not to the start: the same phase and at least the same percentage.
      assert.ok(afterReconnect, 'a state after the reconnect');
      assert.ok(
        ['loading', 'warming up', 'ready'].includes(afterReconnect!.verdict),
        `after reconnect: ${afterReconnect!.verdict}`,
      );
      assert.equal(phaseAtDrop, 'loading weights');
      assert.ok(
        (afterReconnect!.progress ?? 0) >= progressAtDrop,
        `progress ${afterReconnect!.progress} < ${progressAtDrop} at the drop`,
      );
      const firedUp = await host.firedUpAt();
      assert.ok(outcome.state.readyAt! >= firedUp! - 50, 'not ready before SGLang said so');
      // One handshake, plus one for the reconnect: the connection is reused, not re-dialled per probe.
      assert.equal(fx.session.transport.handshakes, 2);
      await disposeAndCheck(fx, host, baseline, { sshdRestarted: true });
      fx = undefined;
    });

    it('the host never comes back: the watch ends unreachable after unreachableTimeoutMs', async () => {
      await host.configureSimulator({ readMBps: 1.5, warmReadMBps: 1.5 });
      fx = await fixture(host);
      let droppedAt = 0;
      const rec = recorder();
      const options: WatchOptions = { ...FAST_WATCH, unreachableTimeoutMs: 3000 };
      const outcome = await fx.session.watch('restart', options, {
        onState: (s) => {
          rec.onState(s);
          if (droppedAt === 0 && s.shards && s.shards.done >= 2) {
            droppedAt = Date.now();
            void host.stopSshd();
          }
        },
      });
      const endedAfter = Date.now() - droppedAt;
      assert.equal(outcome.end, 'unreachable', `ended ${outcome.end}: ${outcome.message}`);
      assert.equal(outcome.state.verdict, 'unreachable');
      assert.match(outcome.message!, /could not be reached for \d+ s/);
      assert.ok(
        endedAfter >= 3000 && endedAfter < 3000 + 2500,
        `ended ${endedAfter} ms after the drop (timeout 3000 ms)`,
      );
      assert.ok(!rec.verdicts.includes('ready') && !rec.verdicts.includes('failed'), `verdicts: ${rec.verdicts}`);
      await host.startSshd();
      await disposeAndCheck(fx, host, baseline, { sshdRestarted: true });
      fx = undefined;
    });

    it('DNS failure, connection refused, wrong key and sudo wanting a password: four distinct, clear messages', async () => {
      const messages: Record<string, string> = {};

      // DNS: a name that cannot resolve (RFC 2606 .invalid).
      fx = await fixture(host, { server: { host: 'no-such-host.invalid' } });
      let outcome = await fx.session.watch('watch', FAST_WATCH);
      assert.equal(outcome.end, 'unreachable');
      assert.equal(outcome.state.verdict, 'unreachable');
      assert.match(outcome.message!, /^Cannot resolve host name no-such-host\.invalid/);
      messages.dns = outcome.message!;
      fx.dispose();

      // Connection refused: nothing listens on the port.
      fx = await fixture(host, { server: { port: await freePort() } });
      outcome = await fx.session.watch('watch', FAST_WATCH);
      assert.equal(outcome.end, 'unreachable');
      assert.match(outcome.message!, /Connection refused by 127\.0\.0\.1:\d+ .*is sshd running\?/);
      messages.refused = outcome.message!;
      fx.dispose();

      // Authentication: a fresh key the host does not know.
      const keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-key-'));
      const stranger = path.join(keyDir, 'stranger_ed25519');
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', stranger]);
      const mark = await markHost(host);
      fx = await fixture(host, { server: { identityFile: stranger } });
      outcome = await fx.session.watch('restart', FAST_WATCH);
      assert.equal(outcome.end, 'unreachable');
      assert.match(
        outcome.message!,
        /^Authentication failed for root@127\.0\.0\.1:\d+; tried: .*stranger_ed25519 \(rejected\)/,
      );
      assert.deepEqual(
        (await mark.newRuns()).map((e) => e.line),
        [],
        'nothing ran on the host',
      );
      messages.auth = outcome.message!;
      fx.dispose();
      fs.rmSync(keyDir, { recursive: true, force: true });

      // sudo: true, and sudo wants a password.
      const sudoJson = path.join(host.stateDir, 'sudo.json');
      fs.writeFileSync(sudoJson, JSON.stringify({ requirePassword: true }));
      try {
        const pidBefore = await host.mainPid();
        fx = await fixture(host, { server: { sudo: true } });
        outcome = await fx.session.watch('restart', FAST_WATCH);
        assert.equal(outcome.end, 'failed');
        assert.equal(outcome.state.verdict, 'failed');
        assert.match(
          outcome.message!,
          /^sudo asks for a password on 127\.0\.0\.1: allow "systemctl restart sglang-k26-ddtree\.service" without a password/,
        );
        assert.equal(await host.mainPid(), pidBefore, 'the unit was not restarted');
        assert.ok(
          (await host.execLog()).some((l) => /sudo '?-n'?/.test(l)),
          'sudo was run non-interactively (-n)',
        );
        messages.sudo = outcome.message!;
      } finally {
        fs.rmSync(sudoJson, { force: true });
      }

      assert.equal(new Set(Object.values(messages)).size, 4, JSON.stringify(messages, null, 1));
      await disposeAndCheck(fx, host, baseline);
      fx = undefined;
    });
  });

  // ------------------------------------------------------------ server

  describe('server', () => {
    const crashes = [
      { at: 'weights', kind: 'oom', line: /torch\.OutOfMemoryError: CUDA out of memory/, extra: { afterShards: 4 } },
      { at: 'kv', kind: 'oom', line: /torch\.OutOfMemoryError: CUDA out of memory/, extra: {} },
      { at: 'cudaGraph', kind: 'cuda', line: /CUDA error: an illegal memory access/, extra: {} },
      {
        at: 'warmup',
        kind: 'traceback',
        line: /Initialization failed\. warmup error|Triton Error \[CUDA\]/,
        extra: {},
      },
    ] as const;
    for (const c of crashes) {
      it(`a crash during ${c.at} (${c.kind}) is failed within 5 s of the exit line (polling every 0.5 s, stalled only after 60 s), with the exit status and the error lines`, async () => {
        await host.configureSimulator({ fault: { crashAt: c.at, kind: c.kind, ...c.extra } });
        fx = await fixture(host);
        const rec = recorder();
        const outcome = await fx.session.watch('restart', FAST_WATCH, { onState: (s) => rec.onState(s) });
        assert.equal(outcome.end, 'failed', `ended ${outcome.end}: ${outcome.message}`);
        assert.ok(!rec.verdicts.includes('ready'), `verdicts: ${rec.verdicts}`);
        const exit = await exitLineAt(host);
        assert.ok(exit, 'systemd logged the exit');
        const latency = rec.firstAt('failed')! - exit!.at;
        assert.ok(latency < 5000, `failed ${latency} ms after the exit line "${exit!.msg}"`);
        const summary = outcome.state.failure!.summary;
        // Scheduler crashes exit 1; a failed warm-up kills its own process tree (SIGKILL), as SGLang does.
        assert.match(summary, c.at === 'warmup' ? /killed by signal (9|KILL)/ : /exited with status 1/);
        const lines = outcome.state.failure!.lines;
        assert.ok(
          lines.some((l) => c.line.test(l)),
          `error lines: ${JSON.stringify(lines, null, 1)}`,
        );
        assert.ok(
          lines.some((l) => /Main process exited/.test(l)),
          `the exit line is among the error lines: ${JSON.stringify(lines)}`,
        );
        await disposeAndCheck(fx, host, baseline);
        fx = undefined;
      });
    }

    it('HTTP that accepts and never answers after ready: the completion times out, never ready, stop() returns at once', async () => {
      await host.configureSimulator({ fault: { http: 'hang', httpPaths: ['/v1/completions'] } });
      fx = await fixture(host, { http: { completionTimeoutMs: 2500 } });
      const session = fx.session;
      let timedOut: LoadState | undefined;
      let stopAsked = 0;
      const watching = session.watch('restart', FAST_WATCH, {
        onState: (s) => {
          if (!timedOut && s.completion && !s.completion.ok) {
            timedOut = s;
            // Let a second completion be in flight (hanging) when the user stops. Not
            // synchronisation: were it not yet in flight, stop() would only be easier.
            setTimeout(() => {
              stopAsked = Date.now();
              session.stop('test over');
            }, 1000);
          }
        },
      });
      const outcome = await watching;
      const stopLatency = Date.now() - stopAsked;
      assert.ok(timedOut, 'a completion was tried and judged');
      assert.equal(timedOut!.completion!.detail, 'timeout');
      assert.equal(timedOut!.verdict, 'warming up');
      assert.equal(outcome.end, 'cancelled');
      assert.notEqual(outcome.state.verdict, 'ready');
      // Well under the hanging completion's 2.5 s timeout: stop() did not wait for it.
      assert.ok(stopLatency < 1000, `stop() took ${stopLatency} ms to end the watch`);
      await disposeAndCheck(fx, host, baseline);
      fx = undefined;
    });

    it('/health flapping 200/503 after ready: ready on the real completion, never failed', async () => {
      await host.configureSimulator({ fault: { http: 'healthFlapping' } });
      fx = await fixture(host);
      const rec = recorder();
      const outcome = await fx.session.watch('restart', FAST_WATCH, { onState: (s) => rec.onState(s) });
      assert.equal(outcome.end, 'ready', `${outcome.end}: ${outcome.message}`);
      assert.ok(!rec.verdicts.includes('failed') && !rec.verdicts.includes('stalled'), `verdicts: ${rec.verdicts}`);
      assert.match(outcome.state.completion!.detail, /completion answered/);
      // Watching again while /health flaps: still ready, not failed.
      const again = await fx.session.watch('watch', FAST_WATCH);
      assert.equal(again.end, 'ready');
      await disposeAndCheck(fx, host, baseline);
      fx = undefined;
    });

    it('a 20 MB answer is capped (not read whole): truncated at 1 MiB, not ready, memory and time bounded', async () => {
      await host.configureSimulator({ fault: { http: 'hugeBody', httpPaths: ['/v1/completions'] } });
      fx = await fixture(host);
      const session = fx.session;
      let judged: LoadState | undefined;
      const watching = session.watch('restart', FAST_WATCH, {
        onState: (s) => {
          if (!judged && s.completion && !s.completion.ok) {
            judged = s;
            session.stop('test over');
          }
        },
      });
      const outcome = await watching;
      assert.ok(judged, 'a completion was tried');
      assert.match(judged!.completion!.detail, /too large and was cut off/);
      assert.notEqual(outcome.state.verdict, 'ready');
      // The client itself: the body stops at the cap; the rest of the 20 MB is never read.
      global.gc?.();
      const heapBefore = process.memoryUsage().heapUsed;
      const t0 = Date.now();
      const r = await session.client.completion('/root/models/Kimi-K2.6', 'hi', 1);
      const took = Date.now() - t0;
      const heapGrowth = process.memoryUsage().heapUsed - heapBefore;
      assert.equal(r.kind, 'http');
      assert.ok(r.kind === 'http' && r.truncated, 'truncated');
      assert.ok(
        r.kind === 'http' && Buffer.byteLength(r.body) === 1024 * 1024,
        `body ${r.kind === 'http' ? Buffer.byteLength(r.body) : 0} bytes`,
      );
      assert.ok(took < 3000, `reading the capped body took ${took} ms`);
      assert.ok(heapGrowth < 16 * 1024 * 1024, `heap grew ${(heapGrowth / 1e6).toFixed(1)} MB for a 20 MB body`);
      await disposeAndCheck(fx, host, baseline);
      fx = undefined;
    });
  });

  // ------------------------------------------------------------ input

  describe('input', () => {
    const canary = `/tmp/canary-${process.pid}`;
    const nasty = [
      `; touch ${canary}`,
      `$(touch ${canary})`,
      `\`touch ${canary}\``,
      `x' ; touch ${canary} ; '`,
      `x" && touch ${canary} #`,
      `a|touch ${canary}`,
      `a\ntouch ${canary}`,
      `a\rb`,
      `a\u0000b`,
      `${'x'.repeat(5000)}`,
      `Kimi-東京-ü-🙂`,
      `-oProxyCommand=touch ${canary}`,
    ];

    /** A fault-free server, loaded and ready (watch-mode cases need one). */
    async function freshReady(): Promise<void> {
      await host.configureSimulator({ ...FAST_SIM, fault: {} });
      const f = await fixture(host);
      try {
        const outcome = await f.session.watch('restart', FAST_WATCH);
        assert.equal(outcome.end, 'ready', `fresh load: ${outcome.end}: ${outcome.message}`);
      } finally {
        f.dispose();
      }
    }

    async function canaryExists(): Promise<boolean> {
      const remote = await host.nsExec(`test -e ${canary}`);
      return remote.code === 0 || fs.existsSync(canary);
    }

    /** Each string setting with each nasty value: rejected naming the setting, or accepted. */
    function fuzz(): { setting: string; value: string; raw: RawSettings }[] {
      const accepted: { setting: string; value: string; raw: RawSettings }[] = [];
      const base = {
        name: 'sim',
        host: '127.0.0.1',
        port: 22,
        username: 'root',
        unit: 'sglang-k26-ddtree',
        url: 'http://127.0.0.1:30001',
      };
      const serverFields = ['name', 'host', 'username', 'identityFile', 'unit', 'url'];
      const topFields = ['activeServer', 'knownHostsFile', 'hostKeyPolicy'];
      for (const value of nasty) {
        for (const field of [...serverFields, ...topFields]) {
          const setting = serverFields.includes(field) ? `kimiService.servers[0].${field}` : `kimiService.${field}`;
          const raw: RawSettings = serverFields.includes(field)
            ? { servers: [{ ...base, [field]: value }] }
            : { servers: [base], [field]: value };
          const result = parseSettings(raw);
          if (result.ok) {
            accepted.push({ setting, value, raw });
            continue;
          }
          assert.ok(
            result.errors.some((e) => e.startsWith(setting)),
            `${setting} = ${JSON.stringify(value.slice(0, 60))}: no message names the setting: ${JSON.stringify(result.errors)}`,
          );
          for (const e of result.errors) {
            assert.ok(!/[\u0000-\u001f]/.test(e), `a message carries a control character: ${JSON.stringify(e)}`);
            assert.ok(e.length < 300, `an overlong message: ${e.slice(0, 100)}...`);
          }
        }
      }
      return accepted;
    }

    it('every string setting fuzzed: rejected with a message naming the setting, or accepted only where nothing reaches a shell', () => {
      const accepted = fuzz();
      // What may be accepted: the display name, local file paths (read by Node, never a shell),
      // and a URL whose path carries the text (percent-encoded, sent as an HTTP path). Never the
      // host, the user, the unit or the policy.
      const allowed = new Set([
        'kimiService.servers[0].name',
        'kimiService.servers[0].identityFile',
        'kimiService.knownHostsFile',
        'kimiService.servers[0].url',
      ]);
      for (const a of accepted)
        assert.ok(allowed.has(a.setting), `${a.setting} accepted ${JSON.stringify(a.value.slice(0, 60))}`);
      // URLs are normalised: no raw space, quote, newline or backtick survives into the profile.
      for (const a of accepted.filter((x) => x.setting.endsWith('.url'))) {
        const r = parseSettings(a.raw);
        assert.ok(r.ok);
        assert.ok(!/[\s'"`]/.test(r.settings.servers[0].url), r.settings.servers[0].url);
      }
    });

    it('accepted odd values, used for real against the host, execute nothing (canary file never appears)', async () => {
      const oddValues: {
        what: string;
        server?: Record<string, unknown>;
        settings?: Record<string, unknown>;
        mode: 'watch' | 'restart';
      }[] = [
        {
          what: 'a name with metacharacters',
          server: { name: `sim$(touch ${canary});\`touch ${canary}\`` },
          mode: 'watch',
        },
        {
          what: 'a URL whose path carries a command',
          server: { url: `${host.serverUrl}/v1;$(touch ${canary})\`touch ${canary}\`` },
          mode: 'watch',
        },
        {
          what: 'an identityFile path with metacharacters',
          server: { identityFile: `/tmp/no-key-$(touch ${canary})-\`touch ${canary}\`` },
          mode: 'watch',
        },
        {
          what: 'a valid but odd unit name (escapes, @ and :)',
          server: { unit: 'sglang\\x3btouch@x:y.service' },
          mode: 'restart',
        },
      ];
      await freshReady();
      for (const odd of oddValues) {
        const f = await fixture(host, { server: odd.server, settings: odd.settings });
        fx = f;
        // The other cases end on their own (ready, unreachable, failed). The odd URL is never
        // ready: stop it once one whole probe round has gone out, i.e. the HTTP probe has been
        // judged and the host has since seen the next round's first remote command.
        const session = f.session;
        const neverEnds = odd.what.startsWith('a URL');
        let judged: Promise<number> | undefined;
        let ended = false;
        const stopper = (async () => {
          if (!neverEnds) return;
          const at = await waitFor(() => (ended ? { commands: Infinity } : judged?.then((n) => ({ commands: n }))), {
            timeoutMs: 30_000,
            message: 'the HTTP probe to be judged',
          });
          await waitFor(async () => ended || (await host.execLog()).length > at.commands, {
            timeoutMs: 30_000,
            message: 'the next probe round',
          });
          session.stop('seen enough');
        })().catch(() => session.stop('safety'));
        const safety = setTimeout(() => session.stop('safety'), 60_000);
        const outcome: WatchOutcome = await session.watch(odd.mode, FAST_WATCH, {
          onState: (s) => {
            if (!judged && (s.http !== undefined || s.completion !== undefined))
              judged = host.execLog().then((l) => l.length);
          },
        });
        ended = true;
        await stopper;
        clearTimeout(safety);
        f.dispose();
        fx = undefined;
        assert.equal(
          await canaryExists(),
          false,
          `${odd.what}: the canary appeared (${outcome.end}: ${outcome.message})`,
        );
        if (odd.what.startsWith('a name')) assert.equal(outcome.end, 'ready', `${outcome.end}: ${outcome.message}`);
        if (odd.what.startsWith('a URL')) {
          assert.notEqual(outcome.state.verdict, 'ready', 'the odd path is a 404, never ready');
          assert.equal(outcome.state.http, 'error', '/v1;.../health is a 404');
        }
        if (odd.what.startsWith('an identityFile')) {
          assert.equal(outcome.end, 'unreachable');
          assert.match(outcome.message!, /Authentication failed .*no-key-\$\(touch .* \(not found\)/);
        }
        if (odd.what.startsWith('a valid but odd unit')) {
          assert.equal(outcome.end, 'failed');
          assert.match(outcome.message!, /not known to systemd|restart .* failed/);
          // The unit reached systemctl as one argument, exactly as written.
          const restarts = (await host.execLog()).filter((l) => / systemctl .*restart/.test(l));
          assert.ok(
            restarts.some((l) => l.includes('sglang\\x3btouch@x:y.service')),
            restarts.slice(-3).join('\n'),
          );
        }
      }
      // A knownHostsFile path with metacharacters (accept-new writes it: Node fs, no shell).
      const khDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-kh-'));
      const oddKnownHosts = path.join(khDir, `$(touch ${canary})`, '`touch x`', 'known_hosts');
      fx = await fixture(host, { policy: 'accept-new', settings: { knownHostsFile: oddKnownHosts } });
      const outcome = await fx.session.watch('watch', FAST_WATCH);
      assert.equal(outcome.end, 'ready');
      assert.match(fs.readFileSync(oddKnownHosts, 'utf8'), /ssh-ed25519/);
      fs.rmSync(khDir, { recursive: true, force: true });
      assert.equal(await canaryExists(), false, 'odd knownHostsFile: the canary appeared');
      await disposeAndCheck(fx, host, baseline);
      fx = undefined;
    });

    it('a model path with metacharacters in the unit ExecStart (data from the host) is quoted, not run', async () => {
      // No spaces (systemd shows argv joined by spaces), but ; > & | and a redirection that would create the canary.
      const odd = path.join(host.fixtureDir, 'models', `odd;>${canary};&>${canary}|`);
      fs.mkdirSync(odd, { recursive: true });
      for (const f of fs.readdirSync(host.modelPath)) fs.symlinkSync(path.join(host.modelPath, f), path.join(odd, f));
      const unitText = host.defaultUnitText.replace(`--model-path ${host.modelPath}`, `--model-path ${odd}`);
      assert.notEqual(unitText, host.defaultUnitText);
      await host.writeUnit(unitText);
      try {
        fx = await fixture(host);
        const outcome = await fx.session.watch('restart', FAST_WATCH);
        assert.equal(outcome.end, 'ready', `${outcome.end}: ${outcome.message}`);
        // The sampler's first line sized it (its find quoted by quote()): one path, all 12 shards.
        assert.ok(
          fx.logLines.some((l) => l.includes(`Model ${odd}: 12 safetensors files`)),
          `the odd path was read as one path: ${fx.logLines.filter((l) => l.includes('Model')).join('\n')}`,
        );
        assert.equal(await canaryExists(), false, 'the canary appeared');
      } finally {
        await host.writeUnit(host.defaultUnitText);
      }
      await disposeAndCheck(fx, host, baseline);
      fx = undefined;
    });

    it('a known_hosts file with comments, markers, hashed and plain lines, several keys per host and garbage: the right key is found, @revoked refused', async () => {
      const keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-kh-keys-'));
      const pub = (type: string, bits?: string) => {
        const f = path.join(keyDir, `k${Math.random().toString(16).slice(2)}`);
        execFileSync('ssh-keygen', ['-q', '-t', type, ...(bits ? ['-b', bits] : []), '-N', '', '-f', f]);
        return fs.readFileSync(`${f}.pub`, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
      };
      const name = `[127.0.0.1]:${host.sshPort}`;
      const realKey = host.hostPublicKey; // "ssh-ed25519 AAAA..."
      const otherEd = pub('ed25519');
      const otherEcdsa = pub('ecdsa', '256');
      const noise = [
        '# known_hosts of a busy workstation',
        '',
        '   # an indented comment',
        'garbage',
        'this line is garbage too ssh-ed25519',
        `${name} ssh-ed25519 !!!not-base64!!!`,
        `${name} ssh-ed25519 ${Buffer.from('not a key blob').toString('base64')}`,
        `@unknown-marker ${name} ${realKey}`,
        `@cert-authority *.example.org ${otherEd}`,
        `github.com,140.82.112.3 ${otherEd}`,
        `${hashHostName('other.example.org')} ${otherEd}`,
        // another key type known for the same host: the ordering must still reach the right key
        `${name} ${otherEcdsa}`,
        '\t',
      ];
      const cases: { what: string; lines: string[]; expect: 'known' | RegExp }[] = [
        {
          what: 'hashed entry among noise',
          lines: [...noise, `${host.knownHostsLine({ hashed: true })}`],
          expect: 'known',
        },
        {
          what: 'plain entry in a pattern list, CRLF endings',
          lines: [...noise, `foo.example,${name},bar ${realKey} comment here`],
          expect: 'known',
        },
        {
          what: '@revoked wins over a plain entry of the same key',
          lines: [...noise, `${name} ${realKey}`, `@revoked * ${realKey}`],
          expect: /marked @revoked .* line \d+; refusing to connect/,
        },
        {
          what: '@cert-authority for the host is no plain host key (refused with the reason: ssh2 cannot check host certificates)',
          lines: [...noise, `@cert-authority ${name} ${realKey}`],
          expect:
            /trusts a certificate authority \(@cert-authority\) for .* is not in the known-hosts file as a plain key; refusing to connect/,
        },
        {
          what: 'a negated pattern vetoes the line',
          lines: [...noise, `!${name},* ${realKey}`],
          expect: /is not in .* and was not trusted/,
        },
      ];
      await freshReady();
      try {
        for (const c of cases) {
          const eol = c.what.includes('CRLF') ? '\r\n' : '\n';
          const text = c.lines.join(eol) + eol;
          const mark = await markHost(host);
          // ssh2's own known-hosts reader is under test: `auto` would hand a host with @revoked or
          // @cert-authority lines to the OpenSSH client (openssh-transport.int covers that).
          const f = await fixture(host, { knownHosts: text, policy: 'strict', settings: { 'ssh.client': 'ssh2' } });
          fx = f;
          const outcome = await f.session.watch('watch', FAST_WATCH);
          if (c.expect === 'known') {
            assert.equal(outcome.end, 'ready', `${c.what}: ${outcome.end}: ${outcome.message}`);
          } else {
            assert.equal(outcome.end, 'unreachable', `${c.what}: ${outcome.end}`);
            assert.match(outcome.message!, c.expect, c.what);
            assert.ok(
              outcome.message!.includes(host.hostKeyFingerprint),
              `${c.what}: the fingerprint is shown: ${outcome.message}`,
            );
            assert.deepEqual(
              (await mark.newRuns()).map((e) => e.line),
              [],
              `${c.what}: nothing ran`,
            );
          }
          assert.equal(fs.readFileSync(f.knownHostsFile, 'utf8'), text, `${c.what}: strict never writes the file`);
          f.dispose();
          fx = undefined;
        }
      } finally {
        fs.rmSync(keyDir, { recursive: true, force: true });
      }
      await disposeAndCheck(undefined, host, baseline);
    });
  });

  // ------------------------------------------------------------ concurrency

  describe('concurrency', () => {
    it('a watch started twice: the second is refused with AlreadyWatchingError and runs nothing', async () => {
      await host.configureSimulator({ readMBps: 8, warmReadMBps: 8 });
      fx = await fixture(host);
      const session = fx.session;
      const restarts = async () => (await host.execLog()).filter((l) => / systemctl .*restart/.test(l)).length;
      const initial = await restarts();
      const first = session.watch('restart', FAST_WATCH);
      // Count from the moment the first watch's restart has reached the host (so its SSH login is done too).
      const restartsBefore = await waitFor(
        async () => {
          const n = await restarts();
          return n > initial ? n : undefined;
        },
        { timeoutMs: 30_000, message: "the first watch's restart to reach the host" },
      );
      const handshakes = session.transport.handshakes;
      const sshdBefore = host.handshakes();
      for (const mode of ['watch', 'restart'] as const) {
        const err = await session.watch(mode, FAST_WATCH).then(
          () => undefined,
          (e: unknown) => e,
        );
        assert.ok(err instanceof AlreadyWatchingError, `second ${mode}: ${String(err)}`);
        assert.match(
          forFront(err.message, 'vscode'),
          /already being watched \((restarting|loading|warming up)\)\. Run "Kimi Service: Stop watching" first\./,
        );
      }
      assert.equal(session.transport.handshakes, handshakes);
      assert.equal(host.handshakes(), sshdBefore, 'no new SSH login');
      assert.equal(await restarts(), restartsBefore, 'no second restart');
      assert.equal((await first).end, 'ready');
      await disposeAndCheck(fx, host, baseline);
      fx = undefined;
    });
  });

  // ------------------------------------------------------------ secrets

  describe('secrets', () => {
    it('with an encrypted key and its passphrase: the passphrase never appears in the log, exec.log, the journal, sshd log or known_hosts', async () => {
      fx = await fixture(host, {
        server: { identityFile: host.encryptedClientKeyPath },
        passphrase: host.encryptedKeyPassphrase,
        policy: 'accept-new',
        knownHosts: '',
      });
      const outcome = await fx.session.watch('restart', FAST_WATCH);
      assert.equal(outcome.end, 'ready', `${outcome.end}: ${outcome.message}`);
      const secret = host.encryptedKeyPassphrase;
      assert.ok(secret.length >= 8);
      assert.ok(fx.logLines.length > 5, 'the session logged');
      assert.ok(!fx.logLines.some((l) => l.includes(secret)), 'passphrase in the session log');
      assert.ok(!(await host.execLog()).some((l) => l.includes(secret)), 'passphrase in exec.log');
      assert.ok(!(await host.journal()).some((l) => l.includes(secret)), 'passphrase in the journal');
      assert.ok(!host.sshdLog().some((l) => l.includes(secret)), 'passphrase in the sshd log');
      const kh = fs.readFileSync(fx.knownHostsFile, 'utf8');
      assert.match(kh, /ssh-ed25519/, 'accept-new wrote the host key');
      assert.ok(!kh.includes(secret), 'passphrase in known_hosts');
      await disposeAndCheck(fx, host, baseline);
      fx = undefined;
    });
  });

  // ------------------------------------------------------------ a second host: crash loop, two servers

  describe('with a second host (Restart=on-failure)', () => {
    let loopHost: GpuHost;
    let fx2: Fixture | undefined;
    before(async () => {
      loopHost = await startGpuHost({
        shards: 8,
        shardBytes: 2 * 1024 * 1024,
        restartOnFailure: true,
        unitName: 'sglang-k26-b',
        sim: { ...FAST_SIM },
      });
    });
    afterEach(() => (fx2 = disposed(fx2)));
    after(() => loopHost?.stop());

    it('a unit restarted by systemd after a crash (Restart=on-failure) is reported as a crash loop', async () => {
      await loopHost.configureSimulator({ ...FAST_SIM, fault: { crashAt: 'kv', kind: 'oom' } });
      baseline = resourceCounts();
      fx2 = await fixture(loopHost);
      const rec = recorder();
      const outcome = await fx2.session.watch('restart', FAST_WATCH, { onState: (s) => rec.onState(s) });
      assert.equal(outcome.end, 'failed', `${outcome.end}: ${outcome.message}`);
      assert.ok(!rec.verdicts.includes('ready'));
      assert.match(outcome.message!, /crash loop/);
      assert.match(outcome.message!, /systemd (is restarting|restarted) it/);
      // The status is the crashed run's (1), read from the journal's exit line when the watch first
      // sees the unit already restarted; when that line has not arrived yet, no status is named.
      assert.doesNotMatch(outcome.message!, /status (?!1\b)\d+/);
      assert.ok(
        outcome.state.failure!.lines.some((l) => /OutOfMemoryError/.test(l)),
        JSON.stringify(outcome.state.failure!.lines),
      );
      const exit = await exitLineAt(loopHost);
      const latency = rec.firstAt('failed')! - exit!.at;
      assert.ok(latency < 5000, `failed ${latency} ms after the exit line`);
      await loopHost.ssh(`systemctl stop ${loopHost.unit}`); // end the loop
      await disposeAndCheck(fx2, loopHost, baseline, { hosts: [loopHost] });
      fx2 = undefined;
    });

    it('two servers watched at once both reach ready, each on its own evidence', async () => {
      // Loads long enough (a: 24 MB in ~6 s, b: 16 MB in ~10 s) for each journal follow to be
      // up and deliver shard lines before HTTP says ready even on a busy machine (ready does not
      // wait for the journal), and for b to be clearly the slower one.
      await loopHost.configureSimulator({ ...FAST_SIM, fault: {}, readMBps: 1.6, warmReadMBps: 1.6 });
      await host.configureSimulator({ ...FAST_SIM, fault: {}, readMBps: 4, warmReadMBps: 4 });
      baseline = resourceCounts();
      fx = await fixture(host, { name: 'a' });
      fx2 = await fixture(loopHost, { name: 'b' });
      const recA = recorder();
      const recB = recorder();
      const [a, b] = await Promise.all([
        fx.session.watch('restart', FAST_WATCH, { onState: (s) => recA.onState(s) }),
        fx2.session.watch('restart', FAST_WATCH, { onState: (s) => recB.onState(s) }),
      ]);
      assert.equal(a.end, 'ready', `a: ${a.end} ${a.message}`);
      assert.equal(b.end, 'ready', `b: ${b.end} ${b.message}`);
      const [firedA, firedB] = [await host.firedUpAt(), await loopHost.firedUpAt()];
      assert.ok(
        a.state.readyAt! >= firedA! - 50 && b.state.readyAt! >= firedB! - 50,
        'each ready after its own server',
      );
      // Different speeds: the slower host's ready comes later, and each watch saw its own shards.
      assert.ok(b.state.readyAt! > a.state.readyAt!, 'b (slower) ready after a');
      assert.equal(a.state.shards?.total, 12);
      assert.equal(b.state.shards?.total, 8);
      assert.equal(fx.session.transport.handshakes, 1);
      assert.equal(fx2.session.transport.handshakes, 1);
      assert.ok(
        fx.logLines.every((l) => !l.includes('[b]')) && fx2.logLines.every((l) => !l.includes('[a]')),
        'logs kept apart',
      );
      fx2.dispose();
      fx2 = undefined;
      await disposeAndCheck(fx, host, baseline, { hosts: [host, loopHost] });
      fx = undefined;
    });
  });
});
