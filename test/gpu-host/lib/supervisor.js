'use strict';
// The per-unit supervisor: what systemd's service manager does for one Type=simple unit.
// Started detached (setsid, stdio to /dev/null) by `systemctl start`; it spawns ExecStart in
// its own process group, journals every stdout/stderr line, records the exit, restarts per
// Restart=, and handles stop requests (SIGTERM to the supervisor) with SIGTERM -> SIGKILL.
// SIGUSR2 = "start now" while waiting in auto-restart.
const path = require('path');
const { spawn } = require('child_process');
const c = require('./common');

const unit = c.normUnit(process.argv[2]);
// What systemd has loaded; re-read at each (re)start and exit, so a daemon-reload while the
// unit runs changes Restart=/ExecStart= of the next automatic restart, like real systemd.
let cfg = c.loadedUnit(unit);
let desc = '';
function refreshCfg() {
  cfg = c.loadedUnit(unit);
  desc = cfg.description && cfg.description !== unit ? `${unit} - ${cfg.description}` : unit;
}
refreshCfg();
const MAX_LINE = 48 * 1024;

let rt = c.readRuntime(unit);
let child = null;
let stopping = false;
let stopTimedOut = false;
let restartTimer = null;
let restartWake = null;
const startTimes = [];

function save() {
  c.writeRuntime(unit, rt);
}
function set(patch) {
  Object.assign(rt, patch);
  rt.StateChangeTimestamp = Date.now();
  save();
}
function log(msg) {
  c.systemdLog(unit, msg);
}

function killGroup(pid, sig) {
  try {
    process.kill(-pid, sig);
  } catch {
    try {
      process.kill(pid, sig);
    } catch {
      /* gone */
    }
  }
}

function buildEnv(invocationId) {
  const fixBin = path.join(c.FIX, 'bin');
  const env = {
    PATH: `${fixBin}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
    LANG: 'C.UTF-8',
    INVOCATION_ID: invocationId,
    SYSTEMD_EXEC_PID: '0',
  };
  Object.assign(env, cfg.environment || {});
  Object.assign(env, c.readEnvFiles(cfg.environmentFiles || []));
  env.KIMI_SIM_ROOT = c.STATE;
  env.KIMI_SIM_UNIT = unit;
  return env;
}

function lineSplitter(pid, ident) {
  let buf = Buffer.alloc(0);
  const emit = (b) => c.journalAppend(unit, pid, ident, b.toString('utf8'));
  return {
    data(chunk) {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      let i;
      while ((i = buf.indexOf(0x0a)) >= 0) {
        emit(buf.subarray(0, i));
        buf = buf.subarray(i + 1);
      }
      while (buf.length >= MAX_LINE) {
        emit(buf.subarray(0, MAX_LINE));
        buf = buf.subarray(MAX_LINE);
      }
    },
    flush() {
      if (buf.length) emit(buf);
      buf = Buffer.alloc(0);
    },
  };
}

function isClean(code, status) {
  if (code === 'exited') return status === 0;
  return ['SIGHUP', 'SIGINT', 'SIGTERM', 'SIGPIPE'].includes(c.sigName(status));
}

function shouldRestart(result, code, status) {
  if (stopping) return false;
  const clean = result === 'success' && isClean(code, status);
  switch (cfg.restart) {
    case 'always':
      return true;
    case 'on-success':
      return clean;
    case 'on-failure':
      return !clean;
    case 'on-abnormal':
      return result === 'signal' || result === 'core-dump' || result === 'timeout' || result === 'watchdog';
    case 'on-abort':
      return result === 'signal' || result === 'core-dump';
    default:
      return false;
  }
}

function finish(result) {
  const failed = result !== 'success';
  const now = Date.now();
  set({
    ActiveState: failed ? 'failed' : 'inactive',
    SubState: failed ? 'failed' : 'dead',
    MainPID: 0,
    InactiveEnterTimestamp: now,
    ActiveExitTimestamp: rt.ActiveExitTimestamp || now,
    supervisorPid: 0,
  });
  process.exit(0);
}

function runOnce() {
  refreshCfg();
  startTimes.push(Date.now());
  // Like systemd, every start of the unit (a manual one or Restart=) is a new invocation: a new
  // 128-bit id in InvocationID= and in the process's $INVOCATION_ID. The old id stays visible
  // until then (while stopping, and in the gap of a restart).
  const invocationId = require('crypto').randomBytes(16).toString('hex');
  const env = buildEnv(invocationId);
  const entry = cfg.execStart.length ? cfg.execStart[cfg.execStart.length - 1] : null;
  if (!entry) {
    log(`${unit}: Service has no ExecStart=, ExecStop=, or SuccessAction=. Refusing.`);
    set({ Result: 'resources' });
    finish('resources');
    return;
  }
  const ex = c.parseExecStart(entry, env, unit);
  const ident = path.basename(ex.argv[0] || 'unknown');
  const startMs = Date.now();
  const startMono = c.monotonicUsec(); // the same instant on CLOCK_MONOTONIC
  let spawnErr = null;
  try {
    child = spawn(ex.path, ex.argv.slice(1), {
      argv0: ex.argv[0],
      cwd: cfg.workingDirectory || '/',
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (e) {
    spawnErr = e;
  }
  const pid = child && child.pid;
  if (!pid) {
    const err = spawnErr || new Error('spawn failed');
    child && child.on('error', () => {});
    const msg =
      err.code === 'ENOENT'
        ? 'No such file or directory'
        : err.code === 'EACCES'
          ? 'Permission denied'
          : String(err.message);
    log(`${unit}: Failed to locate executable ${ex.path}: ${msg}`);
    log(`${unit}: Failed at step EXEC spawning ${ex.path}: ${msg}`);
    set({ InvocationID: invocationId });
    log(`${unit}: Main process exited, code=exited, status=203/EXEC`);
    onExit({ code: 'exited', status: 203, startMs, pid: 0, ident, ignoreErrors: ex.ignoreErrors });
    return;
  }
  set({
    ActiveState: 'active',
    SubState: 'running',
    MainPID: pid,
    ExecMainPID: pid,
    ExecMainStatus: 0,
    ExecMainCode: 0,
    ExecMainStartTimestamp: startMs,
    ExecMainStartTimestampMonotonic: startMono,
    ExecMainExitTimestamp: 0,
    ActiveEnterTimestamp: startMs,
    InactiveExitTimestamp: startMs,
    Result: 'success',
    supervisorPid: process.pid,
    InvocationID: invocationId,
    execPath: ex.path,
    execArgv: ex.argv,
    execIgnoreErrors: ex.ignoreErrors,
    execStartTime: startMs,
    execStopTime: 0,
    execCode: null,
    execStatus: 0,
    execPid: pid,
    procName: ident,
  });
  log(`Started ${desc}.`);
  const out = lineSplitter(pid, ident);
  const err = lineSplitter(pid, ident);
  child.stdout.on('data', (d) => out.data(d));
  child.stderr.on('data', (d) => err.data(d));
  let exited = false;
  child.on('exit', (codeNum, signal) => {
    if (exited) return;
    exited = true;
    const code = signal ? 'killed' : 'exited';
    const status = signal ? c.sigNum(signal) : codeNum;
    // KillMode=control-group: whatever is left of the service's process group goes too.
    killGroup(pid, 'SIGTERM');
    const t = setTimeout(() => killGroup(pid, 'SIGKILL'), 1500);
    let closed = false;
    const done = () => {
      if (closed) return;
      closed = true;
      clearTimeout(t);
      out.flush();
      err.flush();
      onExit({ code, status, startMs, pid, ident, ignoreErrors: ex.ignoreErrors });
    };
    child.on('close', done);
    setTimeout(done, 800);
  });
}

function onExit({ code, status, pid, ident, ignoreErrors }) {
  child = null;
  refreshCfg();
  if (restartWake) {
    restartWake = null;
  }
  const now = Date.now();
  let result;
  if (stopTimedOut) result = 'timeout';
  else if (isClean(code, status) || ignoreErrors) result = 'success';
  else result = code === 'exited' ? 'exit-code' : code === 'dumped' ? 'core-dump' : 'signal';
  if (!isClean(code, status) && pid)
    log(`${unit}: Main process exited, code=${code}, status=${c.exitStatusString(code, status)}`);
  if (result === 'success') log(`${unit}: Deactivated successfully.`);
  else log(`${unit}: Failed with result '${result}'.`);
  set({
    MainPID: 0,
    ExecMainStatus: status,
    ExecMainCode: code === 'exited' ? 1 : code === 'killed' ? 2 : 3,
    ExecMainExitTimestamp: now,
    ActiveExitTimestamp: now,
    Result: result,
    execCode: code,
    execStatus: status,
    execStopTime: now,
  });
  if (stopping) {
    log(`Stopped ${desc}.`);
    finish(result);
    return;
  }
  if (shouldRestart(result, code, status)) {
    const win = (cfg.startLimitIntervalSec || 10) * 1000;
    const recent = startTimes.filter((t) => now - t <= win);
    if (cfg.startLimitBurst > 0 && recent.length >= cfg.startLimitBurst) {
      // the next start would exceed the burst
    }
    set({ ActiveState: 'activating', SubState: 'auto-restart', InactiveEnterTimestamp: now });
    const delay = Math.max(100, (cfg.restartSec || 0.1) * 1000);
    const go = () => {
      restartTimer = null;
      restartWake = null;
      if (stopping) return;
      rt.NRestarts = (rt.NRestarts || 0) + 1;
      log(`${unit}: Scheduled restart job, restart counter is at ${rt.NRestarts}.`);
      log(`Stopped ${desc}.`);
      const now2 = Date.now();
      const recent2 = startTimes.filter((t) => now2 - t <= win);
      if (cfg.startLimitBurst > 0 && recent2.length >= cfg.startLimitBurst) {
        log(`${unit}: Start request repeated too quickly.`);
        log(`${unit}: Failed with result 'start-limit-hit'.`);
        log(`Failed to start ${desc}.`);
        set({ Result: 'start-limit-hit' });
        finish('start-limit-hit');
        return;
      }
      save();
      runOnce();
    };
    restartTimer = setTimeout(go, delay);
    restartWake = () => {
      if (restartTimer) {
        clearTimeout(restartTimer);
        go();
      }
    };
    void ident;
    return;
  }
  finish(result);
}

process.on('SIGUSR2', () => {
  if (restartWake) restartWake();
});
process.on('SIGTERM', () => {
  if (stopping) return;
  stopping = true;
  refreshCfg(); // the stop follows the unit as loaded now (TimeoutStopSec= after a daemon-reload)
  if (child && child.pid) {
    log(`Stopping ${desc}...`);
    set({ ActiveState: 'deactivating', SubState: 'stop-sigterm' });
    const pid = child.pid;
    killGroup(pid, 'SIGTERM');
    // TimeoutStopSec= (null in the snapshot: infinity), then SIGKILL, as systemd does
    const tos = cfg.timeoutStopSec === undefined ? c.DEFAULT_TIMEOUT_STOP_SEC : cfg.timeoutStopSec;
    if (Number.isFinite(tos)) {
      setTimeout(() => {
        if (!child) return;
        log(`${unit}: State 'stop-sigterm' timed out. Killing.`);
        log(`${unit}: Killing process ${pid} (${rt.procName || 'unknown'}) with signal SIGKILL.`);
        stopTimedOut = true;
        set({ SubState: 'stop-sigkill' });
        killGroup(pid, 'SIGKILL');
      }, tos * 1000).unref();
    }
  } else {
    // waiting in auto-restart: cancel it
    if (restartTimer) clearTimeout(restartTimer);
    log(`Stopped ${desc}.`);
    finish(rt.Result || 'success');
  }
});
process.on('SIGHUP', () => {});
process.on('SIGINT', () => {});

// The unit is this supervisor's from here on (it counts as alive), and its main process is not
// forked yet: systemd shows such a start as activating (start) with no MainPID, never as the
// previous run's inactive/failed (a restart followed across its start would read it as stopped).
set({ supervisorPid: process.pid, NRestarts: 0, ActiveState: 'activating', SubState: 'start', MainPID: 0 });
runOnce();
