#!/usr/bin/env node
'use strict';
// Stand-in for systemctl on the simulated GPU host. See test/gpu-host/lib/common.js for the layout.
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');
const c = require('../lib/common');

// The job runner (`systemctl.js __run-job ...`, spawned by systemctl itself) is not a command
// anyone typed: it is not logged.
const RUN_JOB = '__run-job';
if (process.argv[2] !== RUN_JOB) c.logExec('systemctl', process.argv.slice(2));

const SUPERVISOR = path.join(__dirname, '..', 'lib', 'supervisor.js');
// Where errors of start/stop go: stderr for systemctl, the job's result for the job runner.
let errOut = (s) => process.stderr.write(s);

function parseArgs(argv) {
  const o = {
    props: [],
    value: false,
    quiet: false,
    all: false,
    verb: null,
    units: [],
    lines: 10,
    force: false,
    noBlock: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-p' || a === '--property') {
      o.props.push(
        ...String(argv[++i] || '')
          .split(',')
          .filter(Boolean),
      );
    } else if (a.startsWith('--property=')) o.props.push(...a.slice(11).split(',').filter(Boolean));
    else if (a.startsWith('-p') && a.length > 2) o.props.push(...a.slice(2).split(',').filter(Boolean));
    else if (a === '-P') {
      o.props.push(
        ...String(argv[++i] || '')
          .split(',')
          .filter(Boolean),
      );
      o.value = true;
    } else if (a === '--value') o.value = true;
    else if (a === '-q' || a === '--quiet') o.quiet = true;
    else if (a === '-a' || a === '--all') o.all = true;
    else if (a === '-n' || a === '--lines') o.lines = parseInt(argv[++i], 10);
    else if (a.startsWith('--lines=')) o.lines = parseInt(a.slice(8), 10);
    else if (a === '-f' || a === '--force') o.force = true;
    else if (a === '--no-block') o.noBlock = true;
    else if (a === '--no-legend') o.noLegend = true;
    else if (
      a === '--no-pager' ||
      a === '--no-ask-password' ||
      a === '--system' ||
      a === '-l' ||
      a === '--full' ||
      a === '--plain'
    ) {
      /* accepted */
    } else if (a.startsWith('--')) {
      /* unknown long options ignored */
    } else if (!o.verb) o.verb = a;
    else o.units.push(a);
  }
  return o;
}

function execStartProp(cfg, rt) {
  if (!cfg.execStart || !cfg.execStart.length) return '';
  const entry = cfg.execStart[cfg.execStart.length - 1];
  const ex = c.parseExecStart(entry, cfg.environment || {}, cfg.id);
  // Like systemd, the property shows the command line as loaded (after daemon-reload: the new
  // one) with the runtime status of the last run.
  const argv = ex.argv;
  const p = ex.path;
  const start = rt.execStartTime ? c.fmtTimestamp(rt.execStartTime) : 'n/a';
  const stop = rt.execStopTime ? c.fmtTimestamp(rt.execStopTime) : 'n/a';
  const code = rt.execCode || '(null)';
  const status = rt.execCode ? String(rt.execStatus) : '0/0';
  return `{ path=${p} ; argv[]=${argv.join(' ')} ; ignore_errors=${ex.ignoreErrors ? 'yes' : 'no'} ; start_time=[${start}] ; stop_time=[${stop}] ; pid=${rt.execPid || 0} ; code=${code} ; status=${status} }`;
}

function properties(unit) {
  const cfg = c.loadedUnit(unit);
  const rt = c.readRuntime(unit);
  const found = cfg.loadState === 'loaded';
  const needReload = found ? c.filesHash(unit) !== cfg.hash : fs.existsSync(c.unitFile(unit));
  const alive = c.pidAlive(rt.supervisorPid, 'supervisor.js');
  const job = c.readJson(jobFile(unit), null);
  // The old main process gone, the restart job not yet at its start: PID 1 starts the unit in the
  // same step as the stop ends, so systemd never shows this moment as `inactive`, nor as `failed`
  // when the stop ended in TimeoutStopSec's SIGKILL (Result=timeout).
  const restartBetween =
    job && job.type === 'restart' && job.phase === 'running' && ['inactive', 'failed'].includes(rt.ActiveState);
  if (!alive && job && jobLive(job) && (job.phase === 'starting' || restartBetween)) {
    // a restart job between its stop and its new main process (systemd: activating (start))
    rt.ActiveState = 'activating';
    rt.SubState = 'start';
    rt.MainPID = 0;
  } else if (!alive && ['active', 'activating', 'deactivating'].includes(rt.ActiveState)) {
    // supervisor vanished (killed): the unit is dead
    rt.ActiveState = 'failed';
    rt.SubState = 'failed';
    rt.MainPID = 0;
  }
  const ts = c.fmtTimestamp;
  const bootUs = Date.now() * 1000 - c.monotonicUsec();
  const mono = (ms) => (ms ? String(Math.max(0, Math.round(ms * 1000 - bootUs))) : '0');
  const p = [
    ['Type', cfg.type || 'simple'],
    ['Restart', cfg.restart || 'no'],
    ['NotifyAccess', 'none'],
    ['RestartUSec', c.fmtTimespan(cfg.restartSec || 0.1)],
    [
      'TimeoutStopUSec',
      c.fmtTimespan(cfg.timeoutStopSec === undefined ? c.DEFAULT_TIMEOUT_STOP_SEC : cfg.timeoutStopSec),
    ],
    ['RuntimeMaxUSec', 'infinity'],
    ['ExitType', 'main'],
    ['MainPID', String(rt.MainPID || 0)],
    ['ControlPID', '0'],
    ['Result', rt.Result || 'success'],
    ['NRestarts', String(rt.NRestarts || 0)],
    ['ExecMainStartTimestamp', ts(rt.ExecMainStartTimestamp)],
    ['ExecMainStartTimestampMonotonic', String(rt.ExecMainStartTimestampMonotonic || 0)],
    ['ExecMainExitTimestamp', ts(rt.ExecMainExitTimestamp)],
    ['ExecMainExitTimestampMonotonic', mono(rt.ExecMainExitTimestamp)],
    ['ExecMainPID', String(rt.ExecMainPID || 0)],
    ['ExecMainCode', String(rt.ExecMainCode || 0)],
    ['ExecMainStatus', String(rt.ExecMainStatus || 0)],
    ['ExecStart', execStartProp(cfg, rt)],
    ['ControlGroup', rt.MainPID ? `/system.slice/${unit}` : ''],
    ['InvocationID', rt.InvocationID || ''],
    ['Job', runningJobId(unit)],
    [
      'Environment',
      Object.entries(cfg.environment || {})
        .map(([k, v]) => `${k}=${v}`)
        .join(' '),
    ],
    ['WorkingDirectory', cfg.workingDirectory || '/'],
    ['KillMode', 'control-group'],
    ['KillSignal', '15'],
    ['Id', unit],
    ['Names', unit],
    ['Description', cfg.description || unit],
    ['LoadState', found ? 'loaded' : 'not-found'],
    ['ActiveState', found || rt.ActiveState !== 'inactive' ? rt.ActiveState : 'inactive'],
    ['FreezerState', 'running'],
    ['SubState', rt.SubState],
    ['FragmentPath', cfg.fragmentPath || ''],
    ['DropInPaths', (cfg.dropInPaths || []).join(' ')],
    ['UnitFileState', found ? (cfg.wantedBy && cfg.wantedBy.length ? 'enabled' : 'disabled') : ''],
    ['UnitFilePreset', found ? 'enabled' : ''],
    ['StateChangeTimestamp', ts(rt.StateChangeTimestamp)],
    ['InactiveExitTimestamp', ts(rt.InactiveExitTimestamp)],
    ['InactiveExitTimestampMonotonic', mono(rt.InactiveExitTimestamp)],
    ['ActiveEnterTimestamp', ts(rt.ActiveEnterTimestamp)],
    ['ActiveEnterTimestampMonotonic', mono(rt.ActiveEnterTimestamp)],
    ['ActiveExitTimestamp', ts(rt.ActiveExitTimestamp)],
    ['ActiveExitTimestampMonotonic', mono(rt.ActiveExitTimestamp)],
    ['InactiveEnterTimestamp', ts(rt.InactiveEnterTimestamp)],
    ['InactiveEnterTimestampMonotonic', mono(rt.InactiveEnterTimestamp)],
    ['CanStart', 'yes'],
    ['CanStop', 'yes'],
    ['NeedDaemonReload', needReload ? 'yes' : 'no'],
    ['StartLimitIntervalUSec', `${cfg.startLimitIntervalSec || 10}s`],
    ['StartLimitBurst', String(cfg.startLimitBurst ?? 5)],
  ];
  if (!found) {
    // real systemd: not-found units have a minimal property set
    return p
      .filter(([k]) =>
        [
          'Id',
          'Names',
          'LoadState',
          'ActiveState',
          'SubState',
          'MainPID',
          'Result',
          'NRestarts',
          'ExecMainPID',
          'ExecMainCode',
          'ExecMainStatus',
          'Description',
          'FragmentPath',
          'DropInPaths',
          'UnitFileState',
          'NeedDaemonReload',
          'Type',
          'Restart',
          'ActiveEnterTimestamp',
          'InactiveEnterTimestamp',
          'ExecMainStartTimestamp',
          'ExecMainStartTimestampMonotonic',
          'ControlGroup',
          'CanStart',
          'CanStop',
        ].includes(k),
      )
      .map(([k, v]) => [k, k === 'Description' ? unit : v]);
  }
  return p;
}

function cmdShow(o) {
  const units = o.units.length ? o.units.map(c.normUnit) : [];
  if (!units.length) {
    // manager properties
    const props = [
      ['Version', '252.36-1~deb12u1'],
      ['Architecture', 'x86-64'],
      ['SystemState', 'running'],
    ];
    for (const [k, v] of props)
      if (!o.props.length || o.props.includes(k)) process.stdout.write(o.value ? `${v}\n` : `${k}=${v}\n`);
    return 0;
  }
  const blocks = units.map((u) => {
    let props = properties(u);
    if (o.props.length) {
      const want = new Set(o.props);
      const known = new Set(props.map(([k]) => k));
      props = props.filter(([k]) => want.has(k));
      // requested but unknown properties are silently skipped by real systemctl; empty ones print empty
      for (const k of o.props) if (!known.has(k) && KNOWN_EMPTY.has(k)) props.push([k, '']);
    } else if (!o.all) props = props.filter(([, v]) => v !== '');
    return props.map(([k, v]) => (o.value ? `${v}\n` : `${k}=${v}\n`)).join('');
  });
  process.stdout.write(blocks.join('\n'));
  if (!o.value && require('../sglang-sim/hostile').isHostile(c.STATE))
    process.stdout.write(require('../sglang-sim/hostile').garbageShowText());
  return 0;
}
const KNOWN_EMPTY = new Set([
  'StatusText',
  'StatusErrno',
  'ExecStartPre',
  'ExecStop',
  'ExecReload',
  'ExecStartPost',
  'ExecStopPost',
]);

function supervisorAlive(rt) {
  return c.pidAlive(rt.supervisorPid, 'supervisor.js');
}

async function waitFor(pred, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (pred()) return true;
    await c.sleep(25);
  }
  return pred();
}

async function startUnit(unit) {
  const cfg = c.loadedUnit(unit);
  if (cfg.loadState !== 'loaded') {
    errOut(`Failed to start ${unit}: Unit ${unit} not found.\n`);
    return 5;
  }
  const rt = c.readRuntime(unit);
  if (supervisorAlive(rt)) {
    if (rt.SubState === 'auto-restart') {
      try {
        process.kill(rt.supervisorPid, 'SIGUSR2');
      } catch {
        /* */
      }
    }
    return 0;
  }
  const child = spawn(process.execPath, [SUPERVISOR, unit], {
    detached: true,
    stdio: 'ignore',
    cwd: '/',
    env: { ...process.env, KIMI_SIM_ROOT: c.STATE },
  });
  child.unref();
  const pid = child.pid;
  // Type=simple: systemctl start returns once the main process is forked.
  await waitFor(() => {
    const r = c.readRuntime(unit);
    return (r.supervisorPid === pid && r.MainPID) || !c.pidAlive(pid);
  }, 5000);
  const r = c.readRuntime(unit);
  if (
    !r.MainPID &&
    r.ActiveState === 'failed' &&
    r.ExecMainCode === 1 &&
    r.ExecMainStatus >= 200 &&
    r.ExecMainStatus < 250
  ) {
    errOut(
      `Job for ${unit} failed because the control process exited with error code.\n` +
        `See "systemctl status ${unit}" and "journalctl -xeu ${unit}" for details.\n`,
    );
    return 1;
  }
  return 0;
}

/** onDispatched: called once the supervisor has the stop request (the unit is deactivating or gone). */
async function stopUnit(unit, onDispatched = () => {}) {
  const cfg = c.loadedUnit(unit);
  const rt = c.readRuntime(unit);
  if (cfg.loadState !== 'loaded' && !supervisorAlive(rt)) {
    errOut(`Failed to stop ${unit}: Unit ${unit} not loaded.\n`);
    return 5;
  }
  if (!supervisorAlive(rt)) {
    onDispatched();
    return 0;
  }
  try {
    process.kill(rt.supervisorPid, 'SIGTERM');
  } catch {
    /* */
  }
  await waitFor(() => !supervisorAlive(rt) || c.readRuntime(unit).ActiveState === 'deactivating', 2000);
  onDispatched();
  // the supervisor SIGKILLs after TimeoutStopSec; a stop with no timeout waits as long as it takes
  const tos = cfg.timeoutStopSec === undefined ? c.DEFAULT_TIMEOUT_STOP_SEC : cfg.timeoutStopSec;
  const limit = Number.isFinite(tos) ? (tos + 5) * 1000 : Infinity;
  await waitFor(() => !supervisorAlive(rt), limit);
  return 0;
}

// ---- jobs ------------------------------------------------------------------------------------
// systemd runs start/stop/restart as jobs in PID 1: systemctl only enqueues one and (without
// --no-block) waits for its end. Killing systemctl, or closing the SSH channel it runs in,
// leaves the job running. Here a job is a detached runner process (`systemctl.js __run-job`,
// its own session, reparented to the namespace's init); FIX/state/jobs/<unit>.json is the
// unit's job, one at a time. A request of the same type as the running job is merged into it
// (systemd's job merging); another type waits for it to end.
const JOBS_DIR = path.join(c.STATE, 'jobs');
const jobFile = (unit) => path.join(JOBS_DIR, `${unit}.json`);
const resultFile = (id) => path.join(JOBS_DIR, `${id}.result.json`);

function jobLive(j) {
  if (!j) return false;
  if (j.runnerPid) return c.pidAlive(j.runnerPid, 'systemctl.js');
  // just enqueued, its runner not recorded yet
  return Date.now() - (j.created || 0) < 10000;
}

function runningJobId(unit) {
  const j = c.readJson(jobFile(unit), null);
  return j && jobLive(j) ? String(j.id) : '';
}

function newJobId() {
  c.ensureDir(JOBS_DIR);
  const counter = path.join(JOBS_DIR, 'counter');
  let n =
    parseInt(
      (() => {
        try {
          return fs.readFileSync(counter, 'utf8');
        } catch {
          return '0';
        }
      })(),
      10,
    ) || 0;
  for (;;) {
    n++;
    try {
      fs.writeFileSync(path.join(JOBS_DIR, `${n}.json`), '', { flag: 'wx' });
      break;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
    }
  }
  try {
    c.writeJsonAtomic(counter, n);
  } catch {
    /* */
  }
  return n;
}

/** Enqueue (or merge into) a job; returns its id. */
async function enqueueJob(type, unit) {
  c.ensureDir(JOBS_DIR);
  const file = jobFile(unit);
  for (;;) {
    let fd;
    try {
      fd = fs.openSync(file, 'wx');
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      const j = c.readJson(file, null);
      if (!j) {
        // being written right now, or left empty by a systemctl that died in between
        let age = 0;
        try {
          age = Date.now() - fs.statSync(file).mtimeMs;
        } catch {
          continue;
        }
        if (age > 2000) {
          try {
            fs.unlinkSync(file);
          } catch {
            /* */
          }
        }
        await c.sleep(10);
        continue;
      }
      if (jobLive(j)) {
        if (j.type === type || (type === 'try-restart' && j.type === 'restart')) return j.id;
        // a stop replaces a start or restart whose start has not happened yet (its client reads
        // "Job for UNIT canceled."); otherwise the new job waits for the running one
        if (type === 'stop' && j.type !== 'stop' && !j.canceled) {
          const cur = c.readJson(file, null);
          if (cur && cur.id === j.id) c.writeJsonAtomic(file, { ...cur, canceled: true });
        }
        await c.sleep(25);
        continue;
      }
      // a stale job (its runner is gone): drop it unless someone else already replaced it
      const again = c.readJson(file, null);
      if (again && again.id === j.id) {
        try {
          fs.unlinkSync(file);
        } catch {
          /* */
        }
      }
      continue;
    }
    const id = newJobId();
    fs.writeSync(fd, JSON.stringify({ id, type, unit, phase: 'queued', created: Date.now(), owner: process.pid }));
    fs.closeSync(fd);
    const child = spawn(process.execPath, [__filename, RUN_JOB, String(id), type, unit], {
      detached: true,
      stdio: 'ignore',
      cwd: '/',
      env: { ...process.env, KIMI_SIM_ROOT: c.STATE },
    });
    child.unref();
    // recorded at once (the runner needs a moment to start): the job is alive as long as it is
    const j = c.readJson(file, null);
    if (j && j.id === id && !j.runnerPid) c.writeJsonAtomic(file, { ...j, runnerPid: child.pid });
    return id;
  }
}

/** Wait for the job's end (systemctl without --no-block): its exit code and error text. */
async function waitJob(id, unit) {
  for (;;) {
    const r = c.readJson(resultFile(id), null);
    if (r) {
      if (r.stderr) process.stderr.write(r.stderr);
      return r.rc;
    }
    const j = c.readJson(jobFile(unit), null);
    if (j && j.id === id && j.canceled) {
      // replaced by a stop job: its client learns it at once
      process.stderr.write(`Job for ${unit} canceled.\n`);
      return 1;
    }
    if (!j || j.id !== id || !jobLive(j)) {
      const r2 = c.readJson(resultFile(id), null); // written before the job file goes
      if (r2) {
        if (r2.stderr) process.stderr.write(r2.stderr);
        return r2.rc;
      }
      if (j && j.id === id && !jobLive(j)) {
        try {
          fs.unlinkSync(jobFile(unit));
        } catch {
          /* */
        }
      }
      process.stderr.write(`Job for ${unit} canceled.\n`);
      return 1;
    }
    await c.sleep(25);
  }
}

/** --no-block: return once the job has begun (the unit is deactivating, or starting), like a job
 * that PID 1 dispatched at once. */
async function waitJobDispatched(id, unit) {
  await waitFor(() => {
    const j = c.readJson(jobFile(unit), null);
    return !j || j.id !== id || j.phase !== 'queued';
  }, 3000);
  return 0;
}

async function runJob(id, type, unit) {
  const file = jobFile(unit);
  const update = (patch) => {
    const j = c.readJson(file, null);
    if (j && j.id === id) c.writeJsonAtomic(file, { ...j, ...patch });
  };
  update({ runnerPid: process.pid });
  let err = '';
  errOut = (s) => {
    err += s;
  };
  const dispatched = () => update({ phase: 'running' });
  const canceled = () => {
    const j = c.readJson(file, null);
    return !!(j && j.id === id && j.canceled);
  };
  const start = async () => {
    if (canceled()) {
      errOut(`Job for ${unit} canceled.\n`);
      return 1;
    }
    return startUnit(unit);
  };
  let rc = 0;
  try {
    if (type === 'stop') rc = await stopUnit(unit, dispatched);
    else if (type === 'start') {
      dispatched();
      rc = await start();
    } else if (type === 'try-restart' && !supervisorAlive(c.readRuntime(unit))) {
      dispatched();
      rc = 0;
    } else {
      // restart: stop (waits for the old main process, TimeoutStopSec then SIGKILL), then start
      await stopUnit(unit, dispatched);
      // PID 1 starts the unit in the same step as the stop ends: never `inactive` in between.
      update({ phase: 'starting' });
      // sim.json startDelayMs: the start takes this long before its main process (an ExecStartPre,
      // a pull): the unit is activating (start) with no MainPID meanwhile.
      const startDelayMs = Number(c.readJson(path.join(c.STATE, 'sim.json'), {}).startDelayMs) || 0;
      if (startDelayMs > 0) await new Promise((r) => setTimeout(r, startDelayMs));
      // sim.json startHold: the start waits on until it is false again (a test's condition, not a time).
      while (c.readJson(path.join(c.STATE, 'sim.json'), {}).startHold === true)
        await new Promise((r) => setTimeout(r, 100));
      rc = await start();
    }
  } catch (e) {
    err += `${(e && e.stack) || e}\n`;
    rc = 1;
  }
  c.writeJsonAtomic(resultFile(id), { rc, stderr: err });
  const j = c.readJson(file, null);
  if (j && j.id === id) {
    try {
      fs.unlinkSync(file);
    } catch {
      /* */
    }
  }
  try {
    fs.unlinkSync(path.join(JOBS_DIR, `${id}.json`));
  } catch {
    /* */
  }
  return 0;
}

async function jobVerb(type, units, o) {
  let rc = 0;
  for (const u of units) {
    const cfg = c.loadedUnit(u);
    if (cfg.loadState !== 'loaded' && type !== 'stop') {
      const verb = type === 'try-restart' ? 'try-restart' : type;
      process.stderr.write(`Failed to ${verb} ${u}: Unit ${u} not found.\n`);
      rc = 5;
      continue;
    }
    if (type === 'stop' && cfg.loadState !== 'loaded' && !supervisorAlive(c.readRuntime(u))) {
      process.stderr.write(`Failed to stop ${u}: Unit ${u} not loaded.\n`);
      rc = 5;
      continue;
    }
    const id = await enqueueJob(type, u);
    rc = (o.noBlock ? await waitJobDispatched(id, u) : await waitJob(id, u)) || rc;
  }
  return rc;
}

function stateOf(unit) {
  const rt = c.readRuntime(unit);
  let s = rt.ActiveState;
  if (['active', 'activating', 'deactivating'].includes(s) && !supervisorAlive(rt)) s = 'failed';
  return s;
}

function cmdStatus(o) {
  let rc = 0;
  const out = [];
  for (const u of o.units.map(c.normUnit)) {
    const cfg = c.loadedUnit(u);
    if (cfg.loadState !== 'loaded') {
      process.stderr.write(`Unit ${u} could not be found.\n`);
      rc = 4;
      continue;
    }
    const rt = c.readRuntime(u);
    const props = Object.fromEntries(properties(u));
    const st = props.ActiveState;
    const dot = st === 'active' ? '●' : st === 'failed' ? '×' : '○';
    out.push(`${dot} ${u} - ${cfg.description}`);
    out.push(`     Loaded: loaded (${cfg.fragmentPath}; ${props.UnitFileState}; preset: enabled)`);
    if (cfg.dropInPaths.length) {
      const dirs = {};
      for (const d of cfg.dropInPaths) (dirs[path.dirname(d)] ||= []).push(path.basename(d));
      let first = true;
      for (const [d, names] of Object.entries(dirs)) {
        out.push(`${first ? '    Drop-In: ' : '             '}${d}`);
        out.push(`             └─${names.join(', ')}`);
        first = false;
      }
    }
    const since = st === 'active' ? rt.ActiveEnterTimestamp : rt.InactiveEnterTimestamp;
    const ago = since ? `; ${Math.max(0, Math.round((Date.now() - since) / 1000))}s ago` : '';
    let sub = props.SubState;
    if (st === 'failed') sub = `Result: ${props.Result}`;
    out.push(`     Active: ${st} (${sub})${since ? ` since ${c.fmtTimestamp(since)}${ago}` : ''}`);
    if (rt.MainPID) out.push(`   Main PID: ${rt.MainPID} (${rt.procName || 'python'})`);
    else if (rt.ExecMainPID)
      out.push(
        `    Process: ${rt.ExecMainPID} ExecStart=${(rt.execArgv || []).join(' ')} (code=${rt.execCode}, status=${c.exitStatusString(rt.execCode, rt.execStatus)})`,
      );
    out.push(`     CGroup: /system.slice/${u}`);
    if (o.lines > 0 && c.journalAccess() !== 'allowed') {
      // systemd's show_journal(): nothing shown and the access was blocked (src/shared/logs-show.c)
      out.push('');
      out.push('Warning: some journal files were not opened due to insufficient permissions.');
    } else if (o.lines > 0) {
      let lines = [];
      try {
        lines = fs.readFileSync(c.journalPath(u), 'utf8').split('\n').filter(Boolean).slice(-o.lines);
      } catch {
        /* */
      }
      if (lines.length) out.push('');
      for (const l of lines) {
        try {
          const e = JSON.parse(l);
          const d = new Date(Math.floor(e.t / 1000));
          const mon = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][
            d.getUTCMonth()
          ];
          const msg = /[\x00-\x08\x0b-\x1f\x7f]/.test(e.msg) ? `[${Buffer.byteLength(e.msg)}B blob data]` : e.msg;
          out.push(
            `${mon} ${String(d.getUTCDate()).padStart(2, '0')} ${d.toISOString().slice(11, 19)} ${c.HOSTNAME} ${e.ident}[${e.pid}]: ${msg}`,
          );
        } catch {
          /* */
        }
      }
    }
    if (st !== 'active') rc = 3;
    out.push('');
  }
  process.stdout.write(out.join('\n'));
  return rc;
}

function cmdCat(o) {
  let rc = 0;
  const parts = [];
  for (const u of o.units.map(c.normUnit)) {
    const { fragment, dropIns } = c.unitFiles(u);
    if (!fragment) {
      process.stderr.write(`No files found for ${u}.\n`);
      rc = 1;
      continue;
    }
    for (const { file, text } of c.unitTexts(fragment, dropIns))
      parts.push(`# ${c.toDisplay(file)}\n${text.endsWith('\n') || text === '' ? text : `${text}\n`}`);
    if (c.filesHash(u) !== c.loadedUnit(u).hash) {
      process.stderr.write(
        `Warning: ${u} changed on disk, the version systemd has loaded is outdated.\n` +
          "This output shows the current version of the unit's original fragment and drop-in files.\n" +
          'If fragments or drop-ins were added or removed, they are not properly reflected in this output.\n' +
          "Run 'systemctl daemon-reload' to reload units.\n",
      );
    }
  }
  process.stdout.write(parts.join('\n'));
  return rc;
}

/** The fixture's service units (files of /etc/systemd/system, no templates). */
function serviceUnits() {
  let names = [];
  try {
    names = fs
      .readdirSync(c.UNIT_DIR)
      .filter((n) => /^[^@]+\.service$/.test(n))
      .sort();
  } catch {
    /* none */
  }
  return names;
}

// `list-units --all` (loaded units: here every unit file) as `--plain --no-legend` prints it.
function cmdListUnits(o) {
  const rows = serviceUnits()
    .map((u) => {
      const cfg = c.loadedUnit(u);
      const rt = c.readRuntime(u);
      return { u, load: cfg.loadState, active: stateOf(u), sub: rt.SubState || 'dead', desc: cfg.description || u };
    })
    .filter((r) => o.all || r.active !== 'inactive');
  if (!o.noLegend) process.stdout.write('  UNIT LOAD ACTIVE SUB DESCRIPTION\n');
  for (const r of rows) process.stdout.write(`${r.u} ${r.load} ${r.active} ${r.sub} ${r.desc}\n`);
  return 0;
}

function cmdListUnitFiles(o) {
  if (!o.noLegend) process.stdout.write('UNIT FILE STATE PRESET\n');
  for (const u of serviceUnits()) {
    const cfg = c.loadedUnit(u);
    process.stdout.write(`${u} ${cfg.wantedBy && cfg.wantedBy.length ? 'enabled' : 'disabled'} enabled\n`);
  }
  return 0;
}

// What systemd lets only root do (without polkit, as on a server): anyone else gets the bus's
// "Access denied" (systemctl's exit status 4 for a unit job, 1 for daemon-reload).
const ROOT_ONLY = new Set([
  'start',
  'stop',
  'restart',
  'reload-or-restart',
  'try-restart',
  'kill',
  'daemon-reload',
  'reset-failed',
  'enable',
  'disable',
  'mask',
  'unmask',
]);
function refusedToNonRoot(o, units) {
  if (!ROOT_ONLY.has(o.verb) || typeof process.geteuid !== 'function' || process.geteuid() === 0) return undefined;
  if (o.verb === 'daemon-reload') {
    process.stderr.write('Failed to reload daemon: Access denied\n');
    return 1;
  }
  const verb = o.verb === 'reload-or-restart' ? 'reload or restart' : o.verb;
  process.stderr.write(`Failed to ${verb} ${units[0] || 'unit'}: Access denied\n`);
  return 4;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const units = o.units.map(c.normUnit);
  const refused = refusedToNonRoot(o, units);
  if (refused !== undefined) return refused;
  switch (o.verb) {
    case 'show':
      return cmdShow(o);
    case 'is-active': {
      let rc = 3;
      for (const u of units) {
        const s = stateOf(u);
        if (!o.quiet) process.stdout.write(`${s}\n`);
        if (s === 'active' || s === 'reloading') rc = rc === 3 ? 0 : rc;
        else rc = 3;
      }
      return units.length ? rc : 1;
    }
    case 'is-failed': {
      let rc = 1;
      for (const u of units) {
        const s = stateOf(u);
        if (!o.quiet) process.stdout.write(`${s}\n`);
        if (s === 'failed') rc = 0;
      }
      return rc;
    }
    case 'is-enabled': {
      let rc = 1;
      for (const u of units) {
        const cfg = c.loadedUnit(u);
        const s = cfg.loadState !== 'loaded' ? 'not-found' : cfg.wantedBy.length ? 'enabled' : 'disabled';
        if (!o.quiet) process.stdout.write(`${s}\n`);
        if (s === 'enabled') rc = 0;
      }
      return rc;
    }
    case 'start':
      return jobVerb('start', units, o);
    case 'stop':
      return jobVerb('stop', units, o);
    case 'restart':
    case 'reload-or-restart':
      return jobVerb('restart', units, o);
    case 'try-restart':
      return jobVerb('try-restart', units, o);
    case 'kill': {
      for (const u of units) {
        const rt = c.readRuntime(u);
        if (rt.MainPID) {
          try {
            process.kill(-rt.MainPID, 'SIGTERM');
          } catch {
            /* */
          }
        }
      }
      return 0;
    }
    case 'daemon-reload':
      c.daemonReload();
      return 0;
    case 'reset-failed': {
      const list = units.length
        ? units
        : (() => {
            try {
              return fs
                .readdirSync(path.join(c.STATE, 'units'))
                .filter((n) => /\.service\.json$/.test(n))
                .map((n) => n.slice(0, -5));
            } catch {
              return [];
            }
          })();
      for (const u of list) {
        const rt = c.readRuntime(u);
        if (rt.ActiveState === 'failed' && !supervisorAlive(rt)) {
          c.writeRuntime(u, { ...rt, ActiveState: 'inactive', SubState: 'dead', Result: 'success', NRestarts: 0 });
        }
      }
      return 0;
    }
    case 'status':
      return cmdStatus(o);
    case 'cat':
      return cmdCat(o);
    case 'enable':
    case 'disable':
    case 'mask':
    case 'unmask':
      return 0;
    case undefined:
    case 'list-units':
      return cmdListUnits(o);
    case 'list-unit-files':
      return cmdListUnitFiles(o);
    default:
      process.stderr.write(`Unknown command verb '${o.verb}'.\n`);
      return 1;
  }
}

const entry =
  process.argv[2] === RUN_JOB ? () => runJob(Number(process.argv[3]), process.argv[4], process.argv[5]) : main;
entry().then(
  (rc) => {
    process.exitCode = rc;
  },
  (e) => {
    process.stderr.write(`systemctl: ${(e && e.stack) || e}\n`);
    process.exitCode = 1;
  },
);
