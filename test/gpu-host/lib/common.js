'use strict';
// Shared helpers for the simulated GPU host's stand-ins (systemctl, journalctl, nvidia-smi,
// sudo) and the unit supervisor. CommonJS, node builtins only.
//
// Layout (see test/gpu-host/harness.ts): KIMI_SIM_ROOT = FIX/state
//   FIX/etc/systemd/system/         unit files (bind-mounted over /etc/systemd/system in the ns)
//   FIX/state/units/<unit>.json      runtime state written by the supervisor
//   FIX/state/units/<unit>.loaded.json  the unit as of the last daemon-reload
//   FIX/state/journal/<unit>.jsonl   journal: {"t":usec,"pid":N,"ident":"python","msg":"..."}
//   FIX/state/exec.log               one line per stand-in invocation (see logExec)
//   FIX/state/jobs/                  systemctl's job queue: <unit>.json (the unit's running job),
//                                    <id>.json (id reservations), <id>.result.json (a job's outcome)
//   FIX/state/journal-access.json    {"mode":"allowed"|"denied-hint"|"denied-no-files"} (missing: allowed)
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');

const STATE = process.env.KIMI_SIM_ROOT || path.resolve(__dirname, '..', 'state-missing');
const FIX = path.dirname(STATE);
const UNIT_DIR = path.join(FIX, 'etc', 'systemd', 'system');
const DISPLAY_UNIT_DIR = '/etc/systemd/system';
const HOSTNAME = 'gpu-host';

function ensureDir(d) {
  fs.mkdirSync(d, { recursive: true });
}

function shq(s) {
  s = String(s);
  if (/^[A-Za-z0-9_\-.,:=/@%+]+$/.test(s)) return s;
  return "'" + s.replace(/'/g, "'\\''") + "'";
}

// The SSH connection a stand-in runs for: the client end ("address:port") of SSH_CONNECTION, which
// sshd sets in each session. sudo resets the environment, so it is read from the nearest process
// above that has it (the session's shell); "-" when no SSH session is above (the unit supervisor,
// the harness's nsExec). The sshd log names the same port ("Accepted publickey for root from
// 127.0.0.1 port 45678", "Starting session: ... port 45678"), so a test can count what one
// connection did, whatever else talks to the host meanwhile.
function sshClientOf(environ) {
  const m = /(?:^|\0)SSH_CONNECTION=(\S+) (\d+) /.exec(environ);
  return m ? `${m[1]}:${m[2]}` : undefined;
}
function sshClient() {
  if (process.env.SSH_CONNECTION) return sshClientOf(`SSH_CONNECTION=${process.env.SSH_CONNECTION}`) || '-';
  let pid = process.ppid;
  for (let depth = 0; pid > 1 && depth < 16; depth++) {
    try {
      const found = sshClientOf(fs.readFileSync(`/proc/${pid}/environ`, 'latin1'));
      if (found) return found;
    } catch {
      /* another user's process, or gone: look further up */
    }
    try {
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      break;
    }
  }
  return '-';
}

// One line per invocation: "<ISO time> <pid> ssh=<address:port|-> <name> <argv, shell-quoted>".
function logExec(name, argv) {
  if (process.env.KIMI_SIM_NO_EXECLOG) return;
  try {
    ensureDir(STATE);
    fs.appendFileSync(
      path.join(STATE, 'exec.log'),
      `${new Date().toISOString()} ${process.pid} ssh=${sshClient()} ${name} ${argv.map(shq).join(' ')}\n`,
    );
  } catch {
    /* best effort */
  }
}

function readJson(file, dflt) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return dflt;
  }
}
function writeJsonAtomic(file, obj) {
  ensureDir(path.dirname(file));
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(obj, null, 1));
  fs.renameSync(tmp, file);
}

function normUnit(u) {
  if (!u) return u;
  return /\.(service|socket|target|timer|mount|path|slice|scope)$/.test(u) ? u : `${u}.service`;
}
const unitFile = (unit) => path.join(UNIT_DIR, unit);
const dropInDir = (unit) => path.join(UNIT_DIR, `${unit}.d`);
const statePath = (unit) => path.join(STATE, 'units', `${unit}.json`);
const loadedPath = (unit) => path.join(STATE, 'units', `${unit}.loaded.json`);
const journalPath = (unit) => path.join(STATE, 'journal', `${unit}.jsonl`);

// ---- time ---------------------------------------------------------------------------
// systemd's DefaultTimeoutStopSec= (system.conf): 90 s unless the unit says otherwise.
const DEFAULT_TIMEOUT_STOP_SEC = 90;
// systemd's format_timespan(buf, l, t, 0), as `systemctl show` prints *USec properties:
// "1min 30s", "5s", "100ms", "1.500000s", "infinity".
function fmtTimespan(sec) {
  if (sec === Infinity || sec === undefined || sec === null || Number.isNaN(sec)) return 'infinity';
  let t = Math.round(sec * 1e6);
  if (t <= 0) return '0';
  const table = [
    ['y', 31557600e6],
    ['month', 2629800e6],
    ['w', 604800e6],
    ['d', 86400e6],
    ['h', 3600e6],
    ['min', 60e6],
    ['s', 1e6],
    ['ms', 1e3],
    ['us', 1],
  ];
  const parts = [];
  for (const [suffix, unit] of table) {
    if (t <= 0) break;
    if (t < unit) continue;
    const a = Math.floor(t / unit);
    const b = t % unit;
    if (t < 60e6 && b > 0) {
      // below a minute with a remainder: dot notation, all digits of the unit
      const digits = String(unit).length - 1;
      if (digits > 0) {
        parts.push(`${a}.${String(b).padStart(digits, '0')}${suffix}`);
        t = 0;
        break;
      }
    }
    parts.push(`${a}${suffix}`);
    t = b;
  }
  return parts.join(' ');
}
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const p2 = (n) => String(n).padStart(2, '0');
function tzAbbrev() {
  return 'UTC';
}
// All formatting in UTC (the simulated host runs in UTC, like most servers).
function fmtTimestamp(ms) {
  // 'Mon 2026-11-30 05:40:12 UTC'
  if (!ms) return '';
  const d = new Date(ms);
  return (
    `${DAYS[d.getUTCDay()]} ${d.getUTCFullYear()}-${p2(d.getUTCMonth() + 1)}-${p2(d.getUTCDate())} ` +
    `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())} ${tzAbbrev()}`
  );
}
function monotonicUsec() {
  return Number(process.hrtime.bigint() / 1000n);
}
let lastUsec = 0;
function nowUsec() {
  // realtime in microseconds (performance.timeOrigin + now(): sub-ms, steady within the process),
  // strictly increasing within a process, so one writer's entries keep their order in journalctl
  const { performance } = require('perf_hooks');
  let us = Math.floor((performance.timeOrigin + performance.now()) * 1000);
  if (us <= lastUsec) us = lastUsec + 1;
  lastUsec = us;
  return us;
}

// ---- signals / exit status ---------------------------------------------------------
const os = require('os');
const SIGNUM = os.constants.signals;
function sigNum(name) {
  return SIGNUM[name] || 0;
}
function sigName(num) {
  for (const [k, v] of Object.entries(SIGNUM)) if (v === num) return k;
  return String(num);
}
const EXIT_NAMES = {
  0: 'SUCCESS',
  1: 'FAILURE',
  2: 'INVALIDARGUMENT',
  3: 'NOTIMPLEMENTED',
  4: 'NOPERMISSION',
  5: 'NOTINSTALLED',
  6: 'NOTCONFIGURED',
  7: 'NOTRUNNING',
  200: 'CHDIR',
  203: 'EXEC',
  209: 'STDOUT',
  217: 'USER',
};
function exitStatusString(code, status) {
  // code: 'exited'|'killed'|'dumped'
  if (code === 'exited') return EXIT_NAMES[status] ? `${status}/${EXIT_NAMES[status]}` : String(status);
  return `${status}/${sigName(status).replace(/^SIG/, '')}`;
}

// ---- systemd unit-file syntax --------------------------------------------------------
function cunescapeChar(s, i) {
  // s[i] === '\\'; returns [string, nextIndex]
  const c = s[i + 1];
  const map = {
    a: '\x07',
    b: '\b',
    f: '\f',
    n: '\n',
    r: '\r',
    t: '\t',
    v: '\v',
    '\\': '\\',
    '"': '"',
    "'": "'",
    s: ' ',
  };
  if (c === undefined) return ['', i + 1];
  if (c in map) return [map[c], i + 2];
  if (c === 'x' && /^[0-9a-fA-F]{2}$/.test(s.substr(i + 2, 2)))
    return [String.fromCharCode(parseInt(s.substr(i + 2, 2), 16)), i + 4];
  if (/[0-7]/.test(c) && /^[0-7]{3}$/.test(s.substr(i + 1, 3)))
    return [String.fromCharCode(parseInt(s.substr(i + 1, 3), 8)), i + 4];
  return [c, i + 2]; // relaxed: unknown escape -> the char itself
}
// Split like systemd's extract_first_word(EXTRACT_UNQUOTE|EXTRACT_CUNESCAPE): quotes and escapes.
function splitWords(s) {
  const out = [];
  let i = 0;
  const n = s.length;
  while (i < n) {
    while (i < n && /\s/.test(s[i])) i++;
    if (i >= n) break;
    let w = '';
    let q = null;
    for (; i < n; i++) {
      const c = s[i];
      if (q && c === q) {
        q = null;
        continue;
      }
      if (!q && /\s/.test(c)) break;
      if (!q && (c === '"' || c === "'")) {
        q = c;
        continue;
      }
      // An escape is unescaped inside quotes as outside (EXTRACT_CUNESCAPE).
      if (c === '\\') {
        const [r, j] = cunescapeChar(s, i);
        w += r;
        i = j - 1;
        continue;
      }
      w += c;
    }
    out.push(w);
  }
  return out;
}

// Parse a unit file text into [{section, key, value}] (continuations joined with a space).
function parseUnitText(text) {
  const entries = [];
  let section = null;
  let cont = null;
  for (const raw of text.split(/\r?\n/)) {
    let line = raw;
    if (cont !== null) {
      const t = line.trim();
      if (t.startsWith('#') || t.startsWith(';')) continue; // comments inside continuations are skipped
    }
    if (cont === null) {
      const t = line.trim();
      if (t === '' || t.startsWith('#') || t.startsWith(';')) continue;
      if (/^\[.*\]$/.test(t)) {
        section = t.slice(1, -1);
        continue;
      }
      line = t;
    }
    if (/\\$/.test(line) && !/\\\\$/.test(line)) {
      cont = (cont === null ? '' : cont) + line.slice(0, -1) + ' ';
      continue;
    }
    const full = (cont === null ? '' : cont) + line;
    cont = null;
    const eq = full.indexOf('=');
    if (eq < 0) continue;
    entries.push({ section, key: full.slice(0, eq).trim(), value: full.slice(eq + 1).trim() });
  }
  if (cont !== null) {
    const eq = cont.indexOf('=');
    if (eq >= 0) entries.push({ section, key: cont.slice(0, eq).trim(), value: cont.slice(eq + 1).trim() });
  }
  return entries;
}

function parseSeconds(v, dflt) {
  if (v === undefined || v === '') return dflt;
  if (v === 'infinity') return Infinity;
  let total = 0;
  const re = /(\d+(?:\.\d+)?)\s*(ms|msec|s|sec|seconds?|m|min|minutes?|h|hr|hours?|us|usec)?/g;
  let m;
  let any = false;
  while ((m = re.exec(v))) {
    any = true;
    const x = parseFloat(m[1]);
    const u = m[2] || 's';
    if (/^(ms|msec)$/.test(u)) total += x / 1000;
    else if (/^(us|usec)$/.test(u)) total += x / 1e6;
    else if (/^(m|min|minutes?)$/.test(u)) total += x * 60;
    else if (/^(h|hr|hours?)$/.test(u)) total += x * 3600;
    else total += x;
  }
  return any ? total : dflt;
}

function expandSpecifiers(s, unit) {
  const prefix = unit.replace(/\.[a-z]+$/, '');
  return s.replace(/%([%nNpiI])/g, (_, c) => {
    switch (c) {
      case '%':
        return '%';
      case 'n':
        return unit;
      case 'N':
      case 'p':
        return prefix.split('@')[0];
      case 'i':
      case 'I':
        return prefix.includes('@') ? prefix.split('@')[1] : '';
      default:
        return '';
    }
  });
}

function listDropIns(unit) {
  const dir = dropInDir(unit);
  let names = [];
  try {
    names = fs
      .readdirSync(dir)
      .filter((n) => n.endsWith('.conf'))
      .sort();
  } catch {
    /* none */
  }
  return names.map((n) => path.join(dir, n));
}

function unitFiles(unit) {
  const frag = unitFile(unit);
  const files = [];
  if (fs.existsSync(frag)) files.push(frag);
  return {
    fragment: fs.existsSync(frag) ? frag : null,
    dropIns: listDropIns(unit),
    files: files.concat(listDropIns(unit)),
  };
}

/** The unit's fragment and drop-ins that can be read, in order, with their texts. */
function unitTexts(fragment, dropIns) {
  const out = [];
  for (const file of [fragment, ...dropIns]) {
    try {
      out.push({ file, text: fs.readFileSync(file, 'utf8') });
    } catch {
      /* unreadable (gone since it was listed): left out */
    }
  }
  return out;
}

function filesHash(unit) {
  const { fragment, dropIns } = unitFiles(unit);
  const h = crypto.createHash('sha256');
  for (const f of [fragment, ...dropIns]) {
    if (!f) {
      h.update('\0none\0');
      continue;
    }
    h.update(f + '\0');
    try {
      h.update(fs.readFileSync(f));
    } catch {
      h.update('\0gone\0');
    }
    h.update('\0');
  }
  return h.digest('hex');
}

function toDisplay(p) {
  return p && p.startsWith(UNIT_DIR) ? DISPLAY_UNIT_DIR + p.slice(UNIT_DIR.length) : p;
}

// Load a unit from disk into a config object (what systemd would hold after daemon-reload).
function loadUnitFromDisk(unit) {
  const { fragment, dropIns } = unitFiles(unit);
  const cfg = {
    id: unit,
    loadState: fragment ? 'loaded' : 'not-found',
    fragmentPath: fragment ? toDisplay(fragment) : '',
    dropInPaths: dropIns.map(toDisplay),
    description: unit,
    type: 'simple',
    restart: 'no',
    restartSec: 0.1,
    timeoutStopSec: DEFAULT_TIMEOUT_STOP_SEC,
    execStart: [],
    environment: {},
    environmentFiles: [],
    workingDirectory: '/',
    startLimitBurst: 5,
    startLimitIntervalSec: 10,
    wantedBy: [],
    hash: filesHash(unit),
  };
  if (!fragment) return cfg;
  const all = unitTexts(fragment, dropIns).flatMap(({ text }) => parseUnitText(text));
  for (const { section, key, value } of all) {
    if (section === 'Unit') {
      if (key === 'Description') cfg.description = value || unit;
      if (key === 'StartLimitBurst') cfg.startLimitBurst = parseInt(value, 10) || 0;
      if (key === 'StartLimitIntervalSec') cfg.startLimitIntervalSec = parseSeconds(value, 10);
    } else if (section === 'Service') {
      switch (key) {
        case 'Type':
          cfg.type = value || 'simple';
          break;
        case 'Restart':
          cfg.restart = value || 'no';
          break;
        case 'RestartSec':
          cfg.restartSec = parseSeconds(value, 0.1);
          break;
        // 0 and "infinity" disable the timeout (kept as null in the JSON snapshots: infinity)
        case 'TimeoutStopSec':
        case 'TimeoutSec': {
          const v = parseSeconds(value, DEFAULT_TIMEOUT_STOP_SEC);
          cfg.timeoutStopSec = v === 0 ? Infinity : v;
          break;
        }
        case 'WorkingDirectory':
          cfg.workingDirectory = value.replace(/^-/, '') || '/';
          break;
        case 'ExecStart':
          if (value === '') cfg.execStart = [];
          else cfg.execStart.push(value);
          break;
        case 'Environment':
          if (value === '') cfg.environment = {};
          else
            for (const w of splitWords(expandSpecifiers(value, unit))) {
              const i = w.indexOf('=');
              if (i > 0) cfg.environment[w.slice(0, i)] = w.slice(i + 1);
            }
          break;
        case 'EnvironmentFile':
          if (value === '') cfg.environmentFiles = [];
          else cfg.environmentFiles.push(value);
          break;
        default:
          break;
      }
    } else if (section === 'Install') {
      if (key === 'WantedBy') cfg.wantedBy.push(...value.split(/\s+/).filter(Boolean));
    }
  }
  return cfg;
}

// ExecStart value -> { path, argv, ignoreErrors } with env substitution like systemd.
function parseExecStart(value, env, unit) {
  let v = expandSpecifiers(value, unit);
  let ignoreErrors = false;
  for (;;) {
    const c = v[0];
    if (c === '-') {
      ignoreErrors = true;
      v = v.slice(1);
    } else if ('@+!:'.includes(c)) v = v.slice(1);
    else break;
  }
  const words = splitWords(v);
  const argv = [];
  for (const w of words) {
    const whole = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$/.exec(w);
    if (whole && !w.startsWith('${')) {
      // $VAR alone: split into words
      const val = env[whole[1]];
      if (val !== undefined) argv.push(...val.split(/\s+/).filter(Boolean));
      continue;
    }
    argv.push(w.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, k) => env[k] ?? ''));
  }
  return { path: argv[0] || '', argv, ignoreErrors };
}

function readEnvFiles(list) {
  const env = {};
  for (let f of list) {
    const optional = f.startsWith('-');
    if (optional) f = f.slice(1);
    let text;
    try {
      text = fs.readFileSync(f, 'utf8');
    } catch {
      if (optional) continue;
      continue;
    }
    for (const line of text.split(/\n/)) {
      const t = line.trim();
      if (!t || t.startsWith('#') || t.startsWith(';')) continue;
      const i = t.indexOf('=');
      if (i > 0) {
        let val = t.slice(i + 1).trim();
        if (/^".*"$|^'.*'$/.test(val)) val = val.slice(1, -1);
        env[t.slice(0, i).trim()] = val;
      }
    }
  }
  return env;
}

// The unit as systemd currently has it loaded (snapshot from the last daemon-reload; a unit
// never loaded yet is loaded from disk now, like systemd loading it on first reference).
function loadedUnit(unit) {
  const snap = readJson(loadedPath(unit), null);
  if (snap) return snap;
  const cfg = loadUnitFromDisk(unit);
  if (cfg.loadState === 'loaded') writeJsonAtomic(loadedPath(unit), cfg);
  return cfg;
}

function daemonReload() {
  ensureDir(path.join(STATE, 'units'));
  const names = new Set();
  try {
    for (const n of fs.readdirSync(UNIT_DIR)) {
      if (/\.(service)$/.test(n)) names.add(n);
      const m = /^(.*\.service)\.d$/.exec(n);
      if (m) names.add(m[1]);
    }
  } catch {
    /* empty */
  }
  try {
    for (const n of fs.readdirSync(path.join(STATE, 'units'))) {
      const m = /^(.*)\.loaded\.json$/.exec(n);
      if (m) names.add(m[1]);
    }
  } catch {
    /* empty */
  }
  for (const u of names) {
    const cfg = loadUnitFromDisk(u);
    if (cfg.loadState === 'loaded') writeJsonAtomic(loadedPath(u), cfg);
    else {
      try {
        fs.unlinkSync(loadedPath(u));
      } catch {
        /* */
      }
    }
  }
}

// ---- runtime state ---------------------------------------------------------------------
function defaultRuntime() {
  return {
    ActiveState: 'inactive',
    SubState: 'dead',
    MainPID: 0,
    ExecMainPID: 0,
    ExecMainStatus: 0,
    ExecMainCode: 0,
    Result: 'success',
    NRestarts: 0,
    ExecMainStartTimestamp: 0,
    ExecMainStartTimestampMonotonic: 0,
    ExecMainExitTimestamp: 0,
    ActiveEnterTimestamp: 0,
    ActiveExitTimestamp: 0,
    InactiveEnterTimestamp: 0,
    InactiveExitTimestamp: 0,
    StateChangeTimestamp: 0,
    supervisorPid: 0,
    execCode: null,
    execStatus: 0,
    execStopTime: 0,
  };
}
function readRuntime(unit) {
  return Object.assign(defaultRuntime(), readJson(statePath(unit), {}));
}
function writeRuntime(unit, rt) {
  writeJsonAtomic(statePath(unit), rt);
}

function pidAlive(pid, cmdlineMustContain) {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    if (e.code !== 'EPERM') return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const st = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (st === 'Z' || st === 'X') return false;
    if (cmdlineMustContain) {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes(cmdlineMustContain)) return false;
    }
  } catch {
    return false;
  }
  return true;
}

// ---- journal ------------------------------------------------------------------------------
function journalAppend(unit, pid, ident, msg, tUsec) {
  ensureDir(path.join(STATE, 'journal'));
  const rec = JSON.stringify({ t: tUsec || nowUsec(), pid, ident, unit, msg }) + '\n';
  fs.appendFileSync(journalPath(unit), rec);
}
function systemdLog(unit, msg) {
  journalAppend(unit, 1, 'systemd', msg);
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

// ---- journal access -------------------------------------------------------------------------
// What journalctl prints to a user outside 'adm'/'systemd-journal' (systemd src/shared/journal-util.c,
// access_check_var_log_journal() with Debian's ACLs on /var/log/journal, and
// journal_access_check_and_warn()). Both are log_notice/log_error lines on stderr.
const JOURNAL_ACCESS_MODES = ['allowed', 'denied-hint', 'denied-no-files'];
const JOURNAL_HINT =
  'Hint: You are currently not seeing messages from other users and the system.\n' +
  "      Users in groups 'adm', 'systemd-journal' can see all messages.\n" +
  '      Pass -q to turn off this notice.\n';
const JOURNAL_NO_FILES = 'No journal files were opened due to insufficient permissions.\n';
// The groups whose members read the whole journal (Debian's ACLs on /var/log/journal).
const JOURNAL_GROUPS = ['systemd-journal', 'adm'];
/** Root, or a member of 'systemd-journal'/'adm' by the groups of this process (as set at login from /etc/group). */
function mayReadSystemJournal() {
  if (typeof process.geteuid !== 'function' || process.geteuid() === 0) return true;
  const mine = new Set([process.getegid(), ...process.getgroups()]);
  let text = '';
  try {
    text = fs.readFileSync('/etc/group', 'utf8');
  } catch {
    return false;
  }
  for (const line of text.split('\n')) {
    const [name, , gid] = line.split(':');
    if (JOURNAL_GROUPS.includes(name) && mine.has(Number(gid))) return true;
  }
  return false;
}
/**
 * The journal as the calling user sees it: FIX/state/journal-access.json's 'denied-*' modes apply
 * to everyone (the harness's override); 'allowed' (the default) means by group, like a real host:
 * root and members of 'systemd-journal'/'adm' see everything, anyone else gets 'denied-hint'.
 */
function journalAccess() {
  const j = readJson(path.join(STATE, 'journal-access.json'), null);
  const mode = j && JOURNAL_ACCESS_MODES.includes(j.mode) ? j.mode : 'allowed';
  if (mode !== 'allowed') return mode;
  return mayReadSystemJournal() ? 'allowed' : 'denied-hint';
}

module.exports = {
  STATE,
  FIX,
  UNIT_DIR,
  DISPLAY_UNIT_DIR,
  HOSTNAME,
  ensureDir,
  shq,
  logExec,
  readJson,
  writeJsonAtomic,
  normUnit,
  unitFile,
  dropInDir,
  statePath,
  loadedPath,
  journalPath,
  fmtTimestamp,
  monotonicUsec,
  nowUsec,
  sigNum,
  sigName,
  exitStatusString,
  splitWords,
  parseUnitText,
  parseSeconds,
  loadUnitFromDisk,
  parseExecStart,
  readEnvFiles,
  loadedUnit,
  daemonReload,
  filesHash,
  unitFiles,
  unitTexts,
  toDisplay,
  listDropIns,
  defaultRuntime,
  readRuntime,
  writeRuntime,
  pidAlive,
  journalAppend,
  systemdLog,
  sleep,
  DEFAULT_TIMEOUT_STOP_SEC,
  fmtTimespan,
  JOURNAL_ACCESS_MODES,
  JOURNAL_HINT,
  JOURNAL_NO_FILES,
  journalAccess,
  mayReadSystemJournal,
};
