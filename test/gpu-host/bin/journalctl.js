#!/usr/bin/env node
'use strict';
// Stand-in for journalctl on the simulated GPU host: reads FIX/state/journal/<unit>.jsonl.
const fs = require('fs');
const path = require('path');
const c = require('../lib/common');

c.logExec('journalctl', process.argv.slice(2));

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const p2 = (n) => String(n).padStart(2, '0');

function usage(msg) {
  process.stderr.write(`journalctl: ${msg}\n`);
  process.exit(1);
}

function parseTime(s) {
  // -> usec or throws
  const now = Date.now();
  s = s.trim();
  if (s === 'now') return now * 1000;
  if (s === 'today' || s === 'yesterday' || s === 'tomorrow') {
    const d = new Date(now);
    d.setUTCHours(0, 0, 0, 0);
    const off = s === 'yesterday' ? -86400000 : s === 'tomorrow' ? 86400000 : 0;
    return (d.getTime() + off) * 1000;
  }
  let m = /^@(\d+(?:\.\d+)?)$/.exec(s);
  if (m) return Math.round(parseFloat(m[1]) * 1e6);
  m = /^([+-])\s*(.+)$/.exec(s) || /^(.+?)\s+(ago|left)$/.exec(s);
  if (m) {
    const rel = /^[+-]$/.test(m[1]) ? m[2] : m[1];
    const sign = m[1] === '-' || m[2] === 'ago' ? -1 : 1;
    const secs = c.parseSeconds(rel.replace(/(\d)\s+(?=[a-z])/g, '$1'), NaN);
    if (Number.isFinite(secs)) return Math.round((now + sign * secs * 1000) * 1000);
  }
  m = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?(?:\s*(UTC|Z))?$/.exec(s);
  if (m) {
    const ms = Date.UTC(+m[1], +m[2] - 1, +m[3], +(m[4] || 0), +(m[5] || 0), +(m[6] || 0));
    const frac = m[7] ? Math.round(parseFloat(`0.${m[7]}`) * 1e6) : 0;
    return ms * 1000 + frac;
  }
  m = /^(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(s);
  if (m) {
    const d = new Date(now);
    d.setUTCHours(+m[1], +m[2], +(m[3] || 0), 0);
    return d.getTime() * 1000;
  }
  throw new Error(`Failed to parse timestamp: ${s}`);
}

const o = {
  units: [],
  follow: false,
  lines: undefined,
  output: 'short',
  since: null,
  until: null,
  all: false,
  quiet: false,
  noHostname: false,
  reverse: false,
  showCursor: false,
  afterCursor: null,
  cursor: null,
  pager_end: false,
  idents: [],
  grep: null,
  utc: true,
};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  let a = argv[i];
  let val = null;
  const eq = a.startsWith('--') ? a.indexOf('=') : -1;
  if (eq > 0) {
    val = a.slice(eq + 1);
    a = a.slice(0, eq);
  }
  const next = () =>
    val !== null ? val : i + 1 < argv.length ? argv[++i] : usage(`option '${a}' requires an argument`);
  // short options with attached values: -uUNIT, -n10, -ojson
  if (/^-[unoSUt]./.test(a) && !a.startsWith('--')) {
    val = a.slice(2);
    a = a.slice(0, 2);
  }
  switch (a) {
    case '-u':
    case '--unit':
      o.units.push(c.normUnit(next()));
      break;
    case '-f':
    case '--follow':
      o.follow = true;
      break;
    case '-n':
    case '--lines': {
      // -n without a value is allowed in real journalctl (default 10); we need a value or next non-option
      let v = val;
      if (v === null) {
        if (i + 1 < argv.length && /^(\d+|all|\+\d+)$/.test(argv[i + 1])) v = argv[++i];
        else v = '10';
      }
      o.lines = v === 'all' ? Infinity : parseInt(v.replace(/^\+/, ''), 10);
      if (!Number.isFinite(o.lines) && o.lines !== Infinity) usage(`Failed to parse lines '${v}'`);
      break;
    }
    case '-e':
    case '--pager-end':
      o.pager_end = true;
      break;
    case '-o':
    case '--output':
      o.output = next();
      break;
    case '-S':
    case '--since':
      try {
        o.since = parseTime(next());
      } catch (e) {
        usage(e.message);
      }
      break;
    case '-U':
    case '--until':
      try {
        o.until = parseTime(next());
      } catch (e) {
        usage(e.message);
      }
      break;
    case '-a':
    case '--all':
      o.all = true;
      break;
    case '-q':
    case '--quiet':
      o.quiet = true;
      break;
    case '--no-hostname':
      o.noHostname = true;
      break;
    case '-r':
    case '--reverse':
      o.reverse = true;
      break;
    case '--show-cursor':
      o.showCursor = true;
      break;
    case '--after-cursor':
      o.afterCursor = next();
      break;
    case '-c':
    case '--cursor':
      o.cursor = next();
      break;
    case '-t':
    case '--identifier':
      o.idents.push(next());
      break;
    case '-g':
    case '--grep':
      o.grep = new RegExp(next());
      break;
    case '--utc':
      break;
    case '--output-fields':
      o.outputFields = next().split(',').filter(Boolean);
      break;
    case '-b':
    case '--boot':
      if (val === null && i + 1 < argv.length && /^(-?\d+|[0-9a-f]{32})$/.test(argv[i + 1])) i++;
      break;
    case '--no-tail':
      o.noTail = true;
      break;
    case '--no-pager':
    case '-l':
    case '--full':
    case '-x':
    case '--catalog':
    case '--system':
    case '-m':
    case '--merge':
      break;
    case '-xe':
    case '-xeu':
    case '-eu':
    case '-fu':
    case '-xu':
      if (a.includes('e')) o.pager_end = true;
      if (a.includes('f')) o.follow = true;
      if (a.includes('u')) o.units.push(c.normUnit(next()));
      break;
    case '-p':
    case '--priority':
      next();
      break;
    default:
      if (/^_?[A-Z_]+=/.test(a)) {
        const [k, v] = [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)];
        if (k === '_SYSTEMD_UNIT' || k === 'UNIT') o.units.push(c.normUnit(v));
        else if (k === '_PID') o.pid = parseInt(v, 10);
        else if (k === 'SYSLOG_IDENTIFIER') o.idents.push(v);
        break;
      }
      if (a.startsWith('-')) usage(`unrecognized option '${a}'`);
      break;
  }
}
if (
  ![
    'short',
    'short-iso',
    'short-precise',
    'short-iso-precise',
    'short-unix',
    'cat',
    'json',
    'json-seq',
    'verbose',
    'with-unit',
    'short-full',
  ].includes(o.output)
)
  usage(`JSON output mode is not supported: ${o.output}`);
// like journalctl: -f shows the last 10 lines unless --since/--cursor/--no-tail say where to begin
if (o.lines === undefined)
  o.lines =
    o.follow && !o.noTail && o.since === null && !o.afterCursor && !o.cursor ? 10 : o.pager_end ? 1000 : Infinity;

// Journal access (FIX/state/journal-access.json, set by the harness): a user outside 'adm' and
// 'systemd-journal' gets journalctl's hint (unless -q) and sees none of the unit's lines
// ("denied-hint": only the user's own journal files could be opened), or, when no journal file
// could be opened at all ("denied-no-files"), the hint and an error, exit status 1, with or
// without -f. As systemd's journal_access_check_and_warn() (src/shared/journal-util.c). The
// access is decided once, when journalctl starts and opens its files.
const ACCESS = c.journalAccess();
if (ACCESS !== 'allowed') {
  if (!o.quiet) fs.writeSync(2, c.JOURNAL_HINT);
  if (ACCESS === 'denied-no-files') {
    fs.writeSync(2, c.JOURNAL_NO_FILES);
    process.exit(1);
  }
}

const BOOT_US = Date.now() * 1000 - c.monotonicUsec();
const JDIR = path.join(c.STATE, 'journal');
function unitList() {
  if (o.units.length) return [...new Set(o.units)];
  try {
    return fs
      .readdirSync(JDIR)
      .filter((n) => n.endsWith('.jsonl'))
      .map((n) => n.slice(0, -6));
  } catch {
    return [];
  }
}

// file readers with offsets, so -f only parses what is new
const readers = new Map();
function readNew(unit) {
  let r = readers.get(unit);
  if (!r) {
    r = { off: 0, rest: '', idx: 0 };
    readers.set(unit, r);
  }
  const file = c.journalPath(unit);
  let fd;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return [];
  }
  const out = [];
  try {
    const size = fs.fstatSync(fd).size;
    if (size < r.off) {
      r.off = 0;
      r.rest = '';
      r.idx = 0;
    }
    if (size > r.off) {
      const buf = Buffer.alloc(size - r.off);
      const n = fs.readSync(fd, buf, 0, buf.length, r.off);
      r.off += n;
      const text = r.rest + buf.subarray(0, n).toString('utf8');
      const parts = text.split('\n');
      r.rest = parts.pop();
      for (const line of parts) {
        if (!line) continue;
        try {
          const e = JSON.parse(line);
          e.unit = e.unit || unit;
          e.idx = r.idx++;
          out.push(e);
        } catch {
          /* torn */
        }
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return out;
}

function cursorOf(e) {
  return `s=kimisim;i=${e.idx};t=${e.t};u=${e.unit}`;
}
function parseCursor(s) {
  const m = /t=(\d+)/.exec(s || '');
  const u = /u=([^;]+)/.exec(s || '');
  const i = /i=(\d+)/.exec(s || '');
  if (!m) usage('Failed to seek to cursor: Invalid argument');
  return { t: parseInt(m[1], 10), unit: u ? u[1] : '', idx: i ? parseInt(i[1], 10) : 0 };
}
function cmpEntry(a, b) {
  return a.t - b.t || (a.unit < b.unit ? -1 : a.unit > b.unit ? 1 : 0) || a.idx - b.idx;
}

function matches(e) {
  if (ACCESS !== 'allowed') return false; // every entry of the unit is in the system journal
  if (o.since !== null && e.t < o.since) return false;
  if (o.until !== null && e.t > o.until) return false;
  if (o.idents.length && !o.idents.includes(e.ident)) return false;
  if (o.pid && e.pid !== o.pid) return false;
  if (o.grep && !o.grep.test(e.msg)) return false;
  if (o.afterC && cmpEntry(e, o.afterC) <= 0) return false;
  if (o.atC && cmpEntry(e, o.atC) < 0) return false;
  return true;
}
if (o.afterCursor) o.afterC = parseCursor(o.afterCursor);
if (o.cursor) o.atC = parseCursor(o.cursor);

function printable(s) {
  // journalctl's utf8_is_printable: control chars other than \n and \t make it a blob
  return !/[\x00-\x08\x0b-\x1f\x7f-\x9f\ufffd]/.test(s);
}
function fmtBytes(n) {
  if (n < 1024) return `${n}B`;
  const units = ['K', 'M', 'G', 'T'];
  let v = n;
  let u = -1;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(1).replace(/\.0$/, '')}${units[u]}`;
}

function fmtEntry(e) {
  const ms = Math.floor(e.t / 1000);
  const d = new Date(ms);
  const usec = e.t % 1000000;
  const msg = o.all || printable(e.msg) ? e.msg : `[${fmtBytes(Buffer.byteLength(e.msg))} blob data]`;
  const host = o.noHostname ? '' : ` ${c.HOSTNAME}`;
  const who = `${e.ident}[${e.pid}]`;
  const ymd = `${d.getUTCFullYear()}-${p2(d.getUTCMonth() + 1)}-${p2(d.getUTCDate())}`;
  const hms = `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}`;
  const short = `${MONTHS[d.getUTCMonth()]} ${p2(d.getUTCDate())} ${hms}`;
  switch (o.output) {
    case 'cat':
      return `${msg}\n`;
    case 'short-iso':
      return `${ymd}T${hms}+00:00${host} ${who}: ${msg}\n`;
    case 'short-iso-precise':
      return `${ymd}T${hms}.${String(usec).padStart(6, '0')}+00:00${host} ${who}: ${msg}\n`;
    case 'short-precise':
      return `${short}.${String(usec).padStart(6, '0')}${host} ${who}: ${msg}\n`;
    case 'short-unix':
      return `${Math.floor(e.t / 1e6)}.${String(usec).padStart(6, '0')}${host} ${who}: ${msg}\n`;
    case 'short-full':
      return `${['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][d.getUTCDay()]} ${ymd} ${hms} UTC${host} ${who}: ${msg}\n`;
    case 'json':
    case 'json-seq': {
      const obj = {
        __CURSOR: cursorOf(e),
        __REALTIME_TIMESTAMP: String(e.t),
        __MONOTONIC_TIMESTAMP: String(Math.max(0, e.t - BOOT_US)),
        _BOOT_ID: '3b1f0c7e9a2d4c5b8e6f1a2b3c4d5e6f',
        _HOSTNAME: c.HOSTNAME,
        PRIORITY: '6',
        SYSLOG_FACILITY: '3',
        SYSLOG_IDENTIFIER: e.ident,
        _PID: String(e.pid),
        _UID: '0',
        _GID: '0',
        _TRANSPORT: e.pid === 1 ? 'journal' : 'stdout',
        _COMM: e.ident,
      };
      if (e.pid === 1) {
        obj.UNIT = e.unit;
        obj._SYSTEMD_UNIT = 'init.scope';
      } else obj._SYSTEMD_UNIT = e.unit;
      if (printable(e.msg)) obj.MESSAGE = !o.all && Buffer.byteLength(e.msg) >= 4096 ? null : e.msg;
      else obj.MESSAGE = [...Buffer.from(e.msg, 'utf8')];
      // Like journalctl: --output-fields keeps the named fields plus the address fields.
      if (o.outputFields)
        for (const k of Object.keys(obj))
          if (!k.startsWith('__') && k !== '_BOOT_ID' && !o.outputFields.includes(k)) delete obj[k];
      return (o.output === 'json-seq' ? '\x1e' : '') + JSON.stringify(obj) + '\n';
    }
    case 'verbose':
      return `${['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][d.getUTCDay()]} ${ymd} ${hms}.${String(usec).padStart(6, '0')} UTC [${cursorOf(e)}]\n    _PID=${e.pid}\n    _SYSTEMD_UNIT=${e.unit}\n    MESSAGE=${msg}\n`;
    case 'with-unit':
      return `${short}${host} ${e.pid === 1 ? 'systemd' : e.unit}[${e.pid}]: ${msg}\n`;
    default:
      return `${short}${host} ${who}: ${msg}\n`;
  }
}

let closed = false;
function exitNow(code) {
  if (!closed) {
    closed = true;
    process.exit(code);
  }
}
process.stdout.on('error', () => exitNow(0)); // EPIPE: the reader (ssh channel) is gone
process.on('SIGTERM', () => exitNow(0));
process.on('SIGHUP', () => exitNow(0));
process.on('SIGINT', () => exitNow(0));
process.on('SIGPIPE', () => exitNow(0));

let last = null;
function write(s) {
  if (!closed) process.stdout.write(s);
}

// initial batch
const units = unitList();
let all = [];
for (const u of units) all.push(...readNew(u));
all = all.filter(matches).sort(cmpEntry);
if (o.lines !== Infinity) all = all.slice(Math.max(0, all.length - o.lines));
if (o.reverse) all.reverse();
if (!all.length && !o.quiet && !o.follow && o.output.startsWith('short')) write('-- No entries --\n');
let chunk = '';
for (const e of all) {
  chunk += fmtEntry(e);
  last = e;
  if (chunk.length > 65536) {
    write(chunk);
    chunk = '';
  }
}
if (chunk) write(chunk);

if (!o.follow) {
  if (o.showCursor && last) write(`-- cursor: ${cursorOf(last)}\n`);
  process.exitCode = 0;
} else {
  // Follow: poll the journal files (50 ms), like journalctl -f. Exit when stdout's reader is gone
  // (EPIPE on write, or no process holds the pipe's read end any more: the ssh channel closed).
  const follow = () => {
    if (closed) return;
    const names = o.units.length ? units : unitList();
    let batch = [];
    for (const u of names) batch.push(...readNew(u));
    batch = batch.filter(matches).sort(cmpEntry);
    if (batch.length) write(batch.map(fmtEntry).join(''));
  };
  setInterval(follow, 50);
  watchReaderGone();
}

function watchReaderGone() {
  let link;
  try {
    if (!fs.fstatSync(1).isFIFO()) return;
    link = fs.readlinkSync('/proc/self/fd/1');
  } catch {
    return;
  }
  const self = String(process.pid);
  const hasReader = () => {
    let pids;
    try {
      pids = fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n) && n !== self);
    } catch {
      return true;
    }
    for (const pid of pids) {
      let fds;
      try {
        fds = fs.readdirSync(`/proc/${pid}/fd`);
      } catch {
        continue;
      }
      for (const fd of fds) {
        let l;
        try {
          l = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
        } catch {
          continue;
        }
        if (l !== link) continue;
        try {
          const info = fs.readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8');
          const flags = parseInt((/flags:\s*(\d+)/.exec(info) || [])[1] || '0', 8);
          if ((flags & 3) !== 1) return true; // O_RDONLY or O_RDWR: a reader
        } catch {
          return true;
        }
      }
    }
    return false;
  };
  setInterval(() => {
    if (!hasReader()) exitNow(0);
  }, 1000);
}
