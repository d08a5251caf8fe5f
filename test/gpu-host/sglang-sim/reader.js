'use strict';
// Reader child process (stands in for SGLang's per-rank scheduler subprocesses, which read the weights).
// Forked by loader.js with an IPC channel. Reads whole files, rate-limited:
//   the resident prefix (page cache) at the warm rate with plain reads,
//   the rest at the cold rate with O_DIRECT when the job says so and the fs allows (so /proc/PID/io read_bytes
//   grows exactly as the rate limit lets it, with no readahead running ahead), else plain reads.
// Dies with its parent: IPC 'disconnect' or a changed ppid ends it; the parent SIGKILLs it on exit.
const fs = require('fs');
// sim.json coldRateChange {afterMB | afterShare, factor}: once this reader has read afterMB MB (or afterShare of the
// model's bytes, job.totalBytes), cold reads go factor times as fast
const coldRateChange = require('./config').loadConfig(process.env.KIMI_SIM_ROOT || null).coldRateChange;
let readSoFar = 0;
let changeAfter = Infinity;
const coldFactor = () => (coldRateChange && readSoFar >= changeAfter ? Number(coldRateChange.factor) || 1 : 1);
function setChangePoint(job) {
  if (!coldRateChange) return;
  if (coldRateChange.afterMB != null) changeAfter = Number(coldRateChange.afterMB) * 1e6;
  else if (coldRateChange.afterShare != null && job.totalBytes > 0)
    changeAfter = Number(coldRateChange.afterShare) * job.totalBytes;
}

const ALIGN = 4096;
const origPpid = process.ppid;
const bye = () => process.exit(0);
process.on('disconnect', bye);
setInterval(() => {
  if (process.ppid !== origPpid) bye();
}, 500);
// a stop signal to the whole process group is the parent's to handle: it kills and reaps us
process.on('SIGTERM', () => {});
process.on('SIGINT', () => {});

let paused = false;
let resumeWaiters = [];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let clock = null;
let buf = null;
let bufAligned = -1; // offset into buf that is ALIGN-aligned in memory (-1 unknown, -2 none)

function getBuffer(chunk) {
  if (!buf || buf.length < chunk + ALIGN) {
    buf = Buffer.allocUnsafeSlow(chunk + ALIGN);
    bufAligned = -1;
  }
  return buf;
}

/** find an offset into buf that O_DIRECT accepts (memory alignment is not visible from JS: probe it) */
function probeAlignment(fd) {
  if (bufAligned !== -1) return bufAligned;
  for (let off = 0; off < ALIGN; off += 16) {
    try {
      fs.readSync(fd, buf, off, ALIGN, 0);
      bufAligned = off;
      return off;
    } catch (e) {
      if (e.code !== 'EINVAL') break;
    }
  }
  bufAligned = -2;
  return -2;
}

async function readFile(job) {
  const { path, size, warmBytes, warmBps, coldBps } = job;
  setChangePoint(job);
  const chunk = job.chunk;
  getBuffer(chunk);
  let usedDirect = false;
  let fdPlain = fs.openSync(path, 'r');
  let fdDirect = -1;
  const coldStart = Math.min(size, Math.floor(warmBytes / ALIGN) * ALIGN);
  if (job.direct && coldStart < size) {
    try {
      fdDirect = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_DIRECT);
      if (probeAlignment(fdDirect) < 0) {
        fs.closeSync(fdDirect);
        fdDirect = -1;
      }
    } catch {
      fdDirect = -1;
    }
  }
  // one rate-limit timeline across back-to-back files (reset after idling)
  if (!clock || Date.now() - clock.lastEnd > 200) clock = { t0: Date.now(), budget: 0, pausedMs: 0, lastEnd: 0 };
  let pos = 0;
  let lastReport = 0;
  try {
    while (pos < size) {
      if (paused) {
        const p0 = Date.now();
        await new Promise((r) => resumeWaiters.push(r));
        clock.pausedMs += Date.now() - p0;
      }
      const warm = pos < coldStart;
      let n;
      if (warm) {
        const len = Math.min(chunk, coldStart - pos);
        n = fs.readSync(fdPlain, buf, 0, len, pos);
        clock.budget += n / warmBps;
      } else if (fdDirect >= 0) {
        n = fs.readSync(fdDirect, buf, bufAligned, chunk, pos);
        n = Math.min(n, size - pos);
        usedDirect = true;
        clock.budget += n / (coldBps * coldFactor());
      } else {
        n = fs.readSync(fdPlain, buf, 0, Math.min(chunk, size - pos), pos);
        clock.budget += n / (coldBps * coldFactor());
      }
      if (n <= 0) break; // file shrank
      pos += n;
      readSoFar += n;
      const ahead = clock.budget * 1000 - (Date.now() - clock.t0 - clock.pausedMs);
      if (ahead > 1) await sleep(ahead);
      const now = Date.now();
      if (now - lastReport >= 50 && pos < size) {
        lastReport = now;
        process.send({ type: 'progress', id: job.id, bytes: pos });
      }
    }
  } finally {
    fs.closeSync(fdPlain);
    if (fdDirect >= 0) fs.closeSync(fdDirect);
  }
  clock.lastEnd = Date.now();
  process.send({ type: 'done', id: job.id, bytes: pos, direct: usedDirect });
}

const queue = [];
let busy = false;
async function pump() {
  if (busy) return;
  busy = true;
  while (queue.length) {
    const job = queue.shift();
    try {
      await readFile(job);
    } catch (e) {
      process.send({ type: 'error', id: job.id, message: e.message });
    }
  }
  busy = false;
}

process.on('message', (m) => {
  if (m.type === 'read') {
    queue.push(m);
    pump();
  } else if (m.type === 'pause') paused = true;
  else if (m.type === 'resume') {
    paused = false;
    const w = resumeWaiters;
    resumeWaiters = [];
    w.forEach((r) => r());
  }
});
process.send({ type: 'ready', pid: process.pid });
