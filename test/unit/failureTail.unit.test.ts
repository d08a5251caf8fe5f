/**
 * The watcher on a run that has already failed: the journal's tail tells why. A process that died
 * in its first seconds may have its own lines reach the journal after systemd's exit line: the
 * tail is read again until a line tells the cause. A fake host answers
 * `systemctl show` and `journalctl -n`; nothing else is asked of it.
 */
import { strict as assert } from 'node:assert';
import type { ServerProfile } from '../../src/config/config';
import { LoadWatcher } from '../../src/monitor/watch/watcher';
import { FAILURE_TAIL_READS } from '../../src/monitor/watch/watchTypes';
import type { ExecResult, RemoteProcess, Transport } from '../../src/transport/transport';
import type { ServerHttpClient } from '../../src/engine/serverHttp';
import { failureMessage } from '../../src/present/messages';

const UNIT = 'sglang-early.service';
const profile = {
  name: 'gpu1',
  host: 'gpu1',
  port: 22,
  unit: UNIT,
  url: 'http://127.0.0.1:30000',
  urlHost: '127.0.0.1',
  urlPort: 30000,
  sudo: false,
} as unknown as ServerProfile;
const START_S = 1_780_000_000;
const START_MONO_US = 5_000_000;

interface Entry {
  readonly message: string;
  /** Microseconds after the process start. */
  readonly afterUs: number;
  readonly systemd?: boolean;
}

function journalJson(e: Entry): string {
  return JSON.stringify({
    MESSAGE: e.message,
    __REALTIME_TIMESTAMP: String(START_S * 1_000_000 + e.afterUs),
    __MONOTONIC_TIMESTAMP: String(START_MONO_US + e.afterUs),
    _PID: e.systemd ? '1' : '4242',
    SYSLOG_IDENTIFIER: e.systemd ? 'systemd' : 'python3',
  });
}

/** A host whose unit has failed `livedMs` after its start; `tail(n)` is what the n-th `journalctl -n` shows. */
class FailedUnitHost implements Transport {
  readonly description = 'fake host';
  readonly state = { kind: 'connected' } as const;
  readonly handshakes = 1;
  tailReads = 0;

  constructor(
    private readonly livedMs: number,
    private readonly tail: (read: number) => readonly Entry[],
  ) {}

  onStateChange(): { dispose(): void } {
    return { dispose: () => undefined };
  }
  async connect(): Promise<void> {}
  async exec(command: string): Promise<ExecResult> {
    if (/systemctl .*show/.test(command)) {
      const exited = START_S + this.livedMs / 1000;
      const show = [
        `Id=${UNIT}`,
        'LoadState=loaded',
        'ActiveState=failed',
        'SubState=failed',
        'MainPID=0',
        'ExecMainPID=4242',
        'ExecMainStatus=1',
        'ExecMainCode=1',
        `ExecMainStartTimestampMonotonic=${START_MONO_US}`,
        `ExecMainStartTimestamp=@${START_S}`,
        `ExecMainExitTimestamp=@${exited}`,
        'NRestarts=0',
        'Result=exit-code',
        'InvocationID=abc',
        'ExecStart=',
      ];
      return { stdout: `${show.join('\n')}\n`, stderr: '', code: 0 };
    }
    if (/journalctl .* -n \d+/.test(command)) {
      this.tailReads++;
      return { stdout: this.tail(this.tailReads).map(journalJson).join('\n') + '\n', stderr: '', code: 0 };
    }
    return { stdout: '', stderr: `unexpected command: ${command}`, code: 1 };
  }
  async stream(): Promise<RemoteProcess> {
    return { exited: new Promise<number | null>(() => undefined), kill: () => undefined };
  }
  readonly openStream = async (): Promise<never> => {
    throw new Error('no HTTP on a failed unit');
  };
  dispose(): void {}
}

const EXIT_LINES: readonly Entry[] = [
  { message: `${UNIT}: Main process exited, code=exited, status=1/FAILURE`, afterUs: 300_000, systemd: true },
  { message: `${UNIT}: Failed with result 'exit-code'.`, afterUs: 300_100, systemd: true },
];
const WATCHDOG =
  '[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE) ran for 600050 milliseconds before timing out.';

async function watch(host: FailedUnitHost) {
  const http = {
    baseUrl: profile.url,
    setApiKey: () => undefined,
    setBaseUrl: () => undefined,
    setNode: () => undefined,
  } as unknown as ServerHttpClient;
  const watcher = new LoadWatcher({
    profile,
    transport: host,
    http,
    options: { pollIntervalMs: 200, stallMs: 60_000, loadTimeoutMs: 60_000, unreachableTimeoutMs: 60_000 },
    log: () => undefined,
  });
  try {
    return await watcher.run('watch');
  } finally {
    watcher.dispose();
  }
}

describe('watcher: the journal tail of a failed run', () => {
  it("a process dead within a second whose line reaches the journal after systemd's: read again, the line is the cause", async () => {
    // The first look finds only systemd's lines; the process's own line is there at the second.
    const host = new FailedUnitHost(300, (read) =>
      read === 1 ? EXIT_LINES : [...EXIT_LINES, { message: WATCHDOG, afterUs: 400_000 }],
    );
    const outcome = await watch(host);
    assert.equal(outcome.end, 'failed');
    assert.equal(host.tailReads, 2);
    assert.match(
      failureMessage(profile, outcome),
      /failed: the service exited with status 1\. Cause: \[Rank 3\] Watchdog caught collective operation timeout/,
    );
    // systemd's lines are not told twice.
    assert.equal(outcome.state.failure!.lines.filter((l) => /Main process exited/.test(l)).length, 1);
  });

  it('a process that lived long is not waited for: one read, the summary alone when no line tells why', async () => {
    const host = new FailedUnitHost(60_000, () => EXIT_LINES);
    const outcome = await watch(host);
    assert.equal(outcome.end, 'failed');
    assert.equal(host.tailReads, 1);
    assert.match(
      failureMessage(profile, outcome),
      /failed: the service exited with status 1\. Last errors: .*Main process exited/,
    );
  });

  it('a young death whose lines never tell why: FAILURE_TAIL_READS reads (4, 250 ms apart: the failure said within a second), then the failure as it is', async () => {
    const host = new FailedUnitHost(300, () => EXIT_LINES);
    const outcome = await watch(host);
    assert.equal(outcome.end, 'failed');
    assert.equal(host.tailReads, FAILURE_TAIL_READS);
  });
});
