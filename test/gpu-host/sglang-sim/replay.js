'use strict';
// Replay mode of the simulator (docs/replay.md): sim.json `replay: {log, speed, maxGapMs, ...}`
// makes the unit's process play a published server log as a live server. Its lines go to stderr
// (the supervisor journals them, as it does the simulator's own lines) on the schedule of
// replay-plan.js; the HTTP port stays closed until the log's HTTP line and then answers as that
// engine does at that point (HttpApi / VllmHttpApi of the simulator); the weights are really read
// (reader children, as the simulator's loader does) and gpu.json follows the log's phases; at the
// end the process exits with the header's code, kills itself with its signal, hangs, or serves.
//
// replay keys: log (fixture id under test/fixtures/real-logs, or a path to a .log; its header is
//   the .json next to it), dir (another fixtures folder), speed, maxGapMs, defaultGapMs, leadMs
//   (replay-plan.js DEFAULT_OPTIONS), accessLog (false: uvicorn's access lines are not printed, so
//   the journal holds the log's lines only), rewriteAddress (true: the HTTP lines announce the address
//   this process listens on, not the log's), outcome / exitCode / exitSignal (override the header).
const fs = require('fs');
const path = require('path');
const { writeAll } = require('./log');
const { listShards } = require('./loader');
const plan = require('./replay-plan');

const FIXTURES = path.resolve(__dirname, '..', '..', 'fixtures', 'real-logs');

/** The .log and its header for sim.json's replay.log: {logPath, lines (Buffers), text lines, header}. */
function loadFixture(replay) {
  const name = String(replay.log || '');
  if (!name) throw new Error('sim.json replay.log is missing (a fixture id or a path to a .log)');
  const dir = replay.dir ? path.resolve(String(replay.dir)) : FIXTURES;
  const logPath = name.includes('/') || name.endsWith('.log') ? path.resolve(dir, name) : path.join(dir, `${name}.log`);
  const raw = fs.readFileSync(logPath);
  let header = {};
  try {
    header = JSON.parse(fs.readFileSync(logPath.replace(/\.log$/, '') + '.json', 'utf8'));
  } catch (e) {
    if (e.code !== 'ENOENT') throw new Error(`replay header of ${logPath}: ${e.message}`);
  }
  for (const k of ['engine', 'outcome', 'exitCode', 'exitSignal'])
    if (replay[k] !== undefined) header = { ...header, [k]: replay[k] };
  // the bytes of each line as published (split on \n only), for writing; their text for the plan
  const rawLines = [];
  let start = 0;
  for (let i = raw.indexOf(0x0a); i >= 0; i = raw.indexOf(0x0a, start)) {
    rawLines.push(raw.subarray(start, i));
    start = i + 1;
  }
  if (start < raw.length) rawLines.push(raw.subarray(start));
  return { logPath, rawLines, lines: rawLines.map((b) => b.toString('utf8')), header };
}

/** The engine simulator whose HTTP API, memory model and loader the replay borrows (never run). */
function engineSim(engine, unitArgs, cfg, root) {
  const a = unitArgs || {};
  const model = a.model_path || a.model || null;
  const tp = a.tp_size || a.tensor_parallel_size || 1;
  if (engine === 'vllm') {
    const { VllmSim } = require('./vllm');
    return new VllmSim(
      {
        max_model_len: null,
        enforce_eager: false,
        ...a,
        model,
        served_model_name: a.served_model_name || model,
        tensor_parallel_size: tp,
        host: a.host || '0.0.0.0',
        port: a.port || 8000,
      },
      {},
      cfg,
      root,
    );
  }
  const { Sim } = require('./main');
  return new Sim(
    {
      chunked_prefill_size: 8192,
      max_prefill_tokens: 16384,
      ...a,
      model_path: model,
      tokenizer_path: a.tokenizer_path || model,
      served_model_name: a.served_model_name || model,
      tp_size: tp,
      nnodes: 1,
      node_rank: 0,
      host: a.host || '127.0.0.1',
      port: a.port || 30000,
    },
    {},
    cfg,
    root,
  );
}

class Replay {
  constructor(fixture, unitArgs, cfg, root) {
    this.fixture = fixture;
    this.cfg = cfg;
    this.plan = plan.planReplay(fixture.lines, fixture.header, cfg.replay);
    this.witness = plan.witnessesAfter(this.plan.steps);
    this.sim = engineSim(this.plan.engine, unitArgs, cfg, root);
    if (!cfg.replay.accessLog) this.sim.log.out = () => {};
    this.next = 0;
    this.t0 = 0;
    this.timer = null;
    this.stopped = false;
    this.shards = [];
    this.shardsWanted = 0;
    this.rewriteAddress = cfg.replay.rewriteAddress !== false;
  }

  /** The log's HTTP line announcing where this process listens (replay-plan.js withAddress). */
  addressed(line) {
    const { host, port } = this.sim.args;
    return plan.withAddress(line, host === '0.0.0.0' || !host ? '0.0.0.0' : host, port);
  }

  start() {
    const { sim } = this;
    sim.writeGpu(true);
    try {
      if (fs.statSync(sim.args.model_path).isDirectory()) this.shards = listShards(sim.args.model_path);
    } catch {
      /* no model folder: no reads */
    }
    if (this.shards.length) {
      sim.loader = sim.makeLoader();
      sim.measurePageCache(this.shards);
      sim.loader.limit = 0;
      sim.loader.start(this.shards);
    }
    this.t0 = Date.now();
    this.pump();
  }

  /** Write every line that is due (one write per burst), then wait for the next one. */
  pump() {
    this.timer = null;
    if (this.stopped) return;
    const { steps } = this.plan;
    const elapsed = Date.now() - this.t0;
    const parts = [];
    const due = [];
    while (this.next < steps.length && steps[this.next].atMs <= elapsed) {
      const i = this.next;
      parts.push(
        steps[i].http && this.rewriteAddress ? Buffer.from(this.addressed(steps[i].line)) : this.fixture.rawLines[i],
        Buffer.from('\n'),
      );
      due.push(this.next++);
    }
    if (parts.length) writeAll(2, Buffer.concat(parts));
    for (const i of due) this.apply(i);
    if (this.stopped) return;
    if (this.next < steps.length) {
      this.timer = setTimeout(() => this.pump(), Math.max(0, steps[this.next].atMs - (Date.now() - this.t0)));
      return;
    }
    this.end();
  }

  /** What step i changes on the host: witnesses, the HTTP port, readiness. */
  apply(i) {
    const { sim } = this;
    const w = this.witness[i];
    const mem = {
      init: w.init ? sim.cfg.initGB : 0,
      weights: sim.cfg.weightsGB * w.weights,
      kv: w.kv ? sim.cfg.kvCacheGB : 0,
      graph: w.graph ? sim.cfg.cudaGraphGB : 0,
    };
    if (Object.keys(mem).some((k) => mem[k] !== sim.mem[k])) {
      sim.mem = mem;
      sim.writeGpu(true);
    }
    const wanted = Math.round(w.weights * this.shards.length);
    if (sim.loader && wanted > this.shardsWanted) {
      this.shardsWanted = wanted;
      sim.loader.setLimit(wanted);
    }
    if (i === this.plan.httpAt) this.openHttp();
    if (i === this.plan.readyAt) this.becomeReady();
  }

  openHttp() {
    const { sim } = this;
    if (sim.api) return;
    const { HttpApi } = require('./http');
    const { VllmHttpApi } = require('./vllm-http');
    sim.api = this.plan.engine === 'vllm' ? new VllmHttpApi(sim) : new HttpApi(sim);
    const host = sim.args.host === '0.0.0.0' ? '0.0.0.0' : sim.args.host;
    sim.api.listen(host, sim.args.port).then(
      () => {
        sim.httpUp = true;
      },
      (e) => {
        // the port is taken: as uvicorn, which logs it and exits 1
        writeAll(
          2,
          `ERROR:    [Errno 98] error while attempting to bind on address ('${host}', ${sim.args.port}): ${e.code === 'EADDRINUSE' ? 'address already in use' : e.message}\n`,
        );
        this.finish({ kind: 'exit', code: 1 });
      },
    );
  }

  becomeReady() {
    const { sim } = this;
    if (sim.ready) return;
    sim.ready = true;
    sim.phase = 'ready';
    sim.engineWarmResolve();
  }

  /** The log is over: end as its header says. */
  end() {
    const e = this.plan.end;
    if (e.kind === 'serve') {
      // a "ready" log that never printed its HTTP/ready line: up and ready from its last line on
      if (this.plan.httpAt < 0) this.openHttp();
      this.becomeReady();
    }
    if (e.kind === 'serve' || e.kind === 'hang') {
      setInterval(() => {}, 1 << 30); // alive; a hang prints nothing more and moves no witness
      return;
    }
    this.finish(e);
  }

  async finish(e) {
    if (this.stopped) return;
    this.stopped = true;
    const { sim } = this;
    if (e.kind === 'signal') {
      await this.killSelf(e.signal);
      return;
    }
    await sim.exit(e.code);
  }

  /** Killed by `signal` (SGLang's kill_process_tree: SIGKILL), after the port and the readers. */
  async killSelf(signal) {
    const { sim } = this;
    sim.exiting = true;
    if (sim.api) sim.api.close();
    if (sim.loader) await sim.loader.stopAndWait(500);
    sim.cleanup();
    process.removeAllListeners(signal); // our own stop handlers must not catch it
    process.kill(process.pid, signal);
    setTimeout(() => process.exit(1), 1000); // a signal whose default is not to end the process
  }

  /** SIGTERM/SIGINT/SIGHUP (a stop or a restart): the port closes, the readers go, exit 0. */
  stop() {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.sim.exit(0);
  }
}

/** Entry from main.js / vllm.js when sim.json has `replay`: args are the unit's parsed flags. */
function main(unitArgs, cfg, root) {
  // on the next turn: vllm.js, the main module of a vLLM unit, sets its exports after main() returns
  setImmediate(() => run(unitArgs, cfg, root));
}

function run(unitArgs, cfg, root) {
  let replay;
  try {
    replay = new Replay(loadFixture(cfg.replay), unitArgs, cfg, root);
  } catch (e) {
    writeAll(2, `RuntimeError: simulator replay: ${e.message}\n`);
    process.exit(1);
  }
  const sim = replay.sim;
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => replay.stop());
  process.on('exit', () => sim.cleanup());
  process.on('uncaughtException', (e) => {
    writeAll(2, `RuntimeError: simulator replay error: ${(e && e.stack) || e}\n`);
    process.exit(1);
  });
  replay.start();
}

module.exports = { main, loadFixture, FIXTURES };
