/**
 * A restart started elsewhere and followed from its stop: between the old process's end and the
 * new one's fork the unit has a start under way (systemd: activating (start), no MainPID), and
 * the watch that looks at it then must go on to the new run, not end `stopped`. The new run's
 * start is held there (its EnvironmentFile= is a FIFO the test writes once the watch has looked),
 * so the look falls in that moment every time instead of by luck of timing.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import type { LoadState } from '../../src/monitor/state/loadStateTypes';
import { FAST_WATCH, sessionForHost, type TestSession } from './simHost';
import { waitFor } from '../util/waitFor';

describe('a restart followed across the start of its new run', function () {
  this.timeout(120_000);
  let host: GpuHost;
  let test: TestSession | undefined;
  let gate: string;

  before(async () => {
    host = await startGpuHost({
      shards: 4,
      shardBytes: 1024 * 1024,
      sim: { readMBps: 8, warmReadMBps: 8 },
      // The stop is held until the watch has looked at it (stopHold): systemd's SIGKILL must not cut
      // it while a busy machine still starts the watch's SSH login.
      timeoutStopSec: 120,
    });
    gate = path.join(host.fixtureDir, 'start-gate.env');
  });
  after(async () => {
    test?.dispose();
    openGate(gate);
    await host?.stop();
  });

  it('a watch begun while the unit stops, looking while the new run is being started, follows it to ready', async () => {
    await host.configureSimulator({ fault: {}, warmupSeconds: 0.5 });
    assert.equal((await host.ssh(`systemctl restart ${host.unit}`)).code, 0);
    const runtimeFile = path.join(host.stateDir, 'units', `${host.unit}.json`);
    const supervisor = () =>
      (JSON.parse(fs.readFileSync(runtimeFile, 'utf8')) as { supervisorPid?: number }).supervisorPid;
    const oldSupervisor = supervisor();
    assert.ok(oldSupervisor, 'the unit runs');
    assert.equal(spawnSync('mkfifo', [gate]).status, 0, 'mkfifo');
    await host.writeUnit(
      host.defaultUnitText.replace(/^TimeoutStopSec=.*$/m, (line) => `${line}\nEnvironmentFile=${gate}`),
    );
    // The old process stays in its stop until the watch has looked at it, however slow the machine.
    await host.configureSimulator({ stopHold: true });
    try {
      assert.equal((await host.ssh(`systemctl restart --no-block ${host.unit}`)).code, 0);
      await waitFor(
        async () =>
          /ActiveState=deactivating/.test((await host.ssh(`systemctl show ${host.unit} -p ActiveState`)).stdout),
        {
          timeoutMs: 60_000,
          message: 'the unit stopping',
        },
      );
      test = await sessionForHost(host);
      const states: LoadState[] = [];
      const outcome = test.session.watch('watch', FAST_WATCH, { onState: (state) => states.push(state) });
      await waitFor(() => states.some((s) => s.unit?.activeState === 'deactivating'), {
        timeoutMs: 60_000,
        message: 'the watch looking at the stop',
      });
      await host.configureSimulator({ stopHold: false });
      // The new run's supervisor holds the start at the gate; the watch looks at the unit meanwhile.
      await waitFor(
        () => {
          const pid = supervisor();
          return pid !== undefined && pid !== 0 && pid !== oldSupervisor;
        },
        { timeoutMs: 60_000, message: "the new run's start under way" },
      );
      const looksBefore = states.filter((s) => s.unit !== undefined).length;
      let ended = false;
      void outcome.then(() => (ended = true));
      await waitFor(() => ended || states.filter((s) => s.unit !== undefined).length > looksBefore + 1, {
        timeoutMs: 60_000,
        message: 'a look at the unit while the start is held',
      });
      await fs.promises.writeFile(gate, 'START_GATE=open\n');
      const end = await outcome;
      assert.equal(
        end.end,
        'ready',
        `ended ${end.end}: ${end.message ?? ''}; seen: ${[...new Set(states.map((s) => `${s.verdict}(${s.unit?.activeState ?? '-'})`))].join(' ')}`,
      );
    } finally {
      await host.configureSimulator({ stopHold: false });
      openGate(gate);
      await host.writeUnit(host.defaultUnitText);
      fs.rmSync(gate, { force: true });
    }
  });
});

/** Lets a start waiting at the gate go on (nothing when no one reads it). */
function openGate(gate: string): void {
  try {
    const fd = fs.openSync(gate, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
    fs.writeSync(fd, 'START_GATE=open\n');
    fs.closeSync(fd);
  } catch {
    /* no reader, or no gate */
  }
}
