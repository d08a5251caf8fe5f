/**
 * The journal witness tells the watcher of a stop (systemd's "Stopping ..." line) only for the run
 * the watch follows: the lines of the restart it held before the watch was tied to the new run (the old run's stop among
 * them) are read again after that, and an old run's late line can come after it; neither
 * may say that the new run is being stopped. A fake target hands the entries to the witness; a
 * fake context takes its signals.
 */
import { strict as assert } from 'node:assert';
import { JournalWitness, type FollowedRun } from '../../src/monitor/watch/journalWitness';
import type { WitnessContext } from '../../src/monitor/watch/witness';
import type { WatcherDeps } from '../../src/monitor/watch/watchTypes';
import { initialState } from '../../src/monitor/state/loadState';
import type { LoadState } from '../../src/monitor/state/loadStateTypes';
import type { LogEntry, LogFollowHandlers, Target } from '../../src/target/target';
import type { RemoteProcess } from '../../src/transport/transport';

const UNIT = 'sglang.service';
const OLD_START = 1_780_000_000_000;
const NEW_START = OLD_START + 60_000;

function entry(message: string, at: number, withMonotonic: boolean): LogEntry {
  // Monotonic microseconds: the process starts' distance kept (the old run started at 5 s).
  const monotonicUs = 5_000_000 + (at - OLD_START) * 1000;
  return { message, at, identifier: 'systemd', pid: 1, ...(withMonotonic ? { monotonicUs } : {}) };
}

/** One journal witness with a fake target (one follow at a time) and the run it is told of. */
function setUp() {
  let handlers: LogFollowHandlers | undefined;
  let follows = 0;
  const process: RemoteProcess = { exited: new Promise<number | null>(() => undefined), kill: () => undefined };
  const target = {
    label: UNIT,
    logFollowEndsWithService: false,
    followLog: async (_io: unknown, _since: number, h: LogFollowHandlers) => {
      handlers = h;
      follows++;
      return process;
    },
  } as unknown as Target;
  let state: LoadState = { ...initialState(OLD_START), connected: true };
  const context: WitnessContext = {
    deps: { profile: { unit: UNIT }, log: () => undefined } as unknown as WatcherDeps,
    now: () => NEW_START + 5_000,
    state: () => state,
    mode: () => 'load',
    emit: () => undefined,
    alertOnce: () => undefined,
    lookAtUnit: () => undefined,
    probeSoon: () => undefined,
  };
  let run: FollowedRun = { tied: false, restarting: true, since: undefined, startMonotonicUs: undefined };
  let stops = 0;
  const witness = new JournalWitness(context, target, {
    run: () => run,
    running: () => true,
    io: () => ({}) as never,
    samplerLive: () => true,
    onStopping: () => stops++,
    onAnnounced: () => undefined,
  });
  return {
    witness,
    /** The journal follow writes one entry. */
    write(e: LogEntry): void {
      assert.ok(handlers, 'the journal is followed');
      handlers.onEntry(e);
    },
    /** The watcher tied to the new run (what its look at the unit said of the start). */
    tieToRun(startMonotonicUs: number | undefined): void {
      run = { tied: true, restarting: false, since: NEW_START, startMonotonicUs };
      state = { ...state, unit: undefined };
    },
    get stops() {
      return stops;
    },
    get follows() {
      return follows;
    },
  };
}

/** Lets the follow's promise settle (the witness keeps the process it was given). */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('journal witness: a stop belongs to the followed run', () => {
  for (const [name, monotonic] of [
    ['with the journal monotonic clock', true],
    ['without it (no process start on that clock)', false],
  ] as const) {
    describe(name, () => {
      it('the old run\'s "Stopping" held during the restart and read again once the watch is tied to the new run is no stop of it', async () => {
        const w = setUp();
        w.witness.start();
        await settled();
        assert.equal(w.follows, 1, 'the restart is followed before the new run is known');
        w.write(entry(`Stopping ${UNIT} - SGLang...`, NEW_START - 4_000, monotonic));
        w.write(entry(`Stopped ${UNIT} - SGLang.`, NEW_START - 50, monotonic));
        w.write(entry(`Started ${UNIT} - SGLang.`, NEW_START + 10, monotonic));
        const beforeTied = w.stops;
        w.tieToRun(monotonic ? 5_000_000 + (NEW_START - OLD_START) * 1000 : undefined);
        w.witness.followFromProcessStart();
        assert.equal(w.follows, 1, 'the follow of the restart goes on (its entries read again)');
        assert.equal(w.stops - beforeTied, 0, 'no stop of the followed run from the replay');
        assert.equal(beforeTied, 0, 'no stop told before a run is followed');
      });

      it('a late line of the old run after the watch is tied to the new one is no stop; the followed run\'s own "Stopping" is', async () => {
        const w = setUp();
        w.witness.start();
        await settled();
        w.tieToRun(monotonic ? 5_000_000 + (NEW_START - OLD_START) * 1000 : undefined);
        w.witness.followFromProcessStart();
        w.write(entry(`Stopping ${UNIT} - SGLang...`, NEW_START - 2_000, monotonic));
        assert.equal(w.stops, 0, "an earlier run's stop");
        w.write(entry(`Stopping ${UNIT} - SGLang...`, NEW_START + 30_000, monotonic));
        assert.equal(w.stops, 1, 'the followed run is being stopped');
      });
    });
  }
});
