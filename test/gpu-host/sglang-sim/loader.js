'use strict';
// Weight loading: list the model's *.safetensors, hand whole files to reader child processes
// (children of the main process, like SGLang's per-rank schedulers), report bytes and shard completions.
const fs = require('fs');
const path = require('path');
const { fork } = require('child_process');
const { EventEmitter } = require('events');

/** sorted list of {path,size} for *.safetensors in dir (not recursive, like SGLang's glob) */
function listShards(dir) {
  return fs
    .readdirSync(dir)
    .filter((n) => n.endsWith('.safetensors'))
    .sort()
    .map((n) => {
      const p = path.join(dir, n);
      return { path: p, size: fs.statSync(p).size };
    });
}

/** chunk size for a rate: ~50 ms of reading, 64 KiB..4 MiB, multiple of 4 KiB */
function chunkFor(bps) {
  const c = Math.min(4 << 20, Math.max(64 << 10, bps * 0.05));
  return Math.floor(c / 4096) * 4096;
}

class Loader extends EventEmitter {
  /**
   * @param {object} o {shards, readers, coldBps, warmBps, direct (O_DIRECT for the cold bytes),
   *   residentOf(path,size)->bytes (read at the warm rate), chunk}
   */
  constructor(o) {
    super();
    this.o = o;
    this.children = [];
    this.next = 0; // next shard index to dispatch
    this.limit = Infinity; // dispatch no shard with index >= limit (hang/crash points)
    this.done = 0;
    this.doneBytes = 0;
    this.inflight = new Map(); // id -> {child, bytes}
    this.bytesByFile = new Map();
    this.usedDirect = false;
    this.stopped = false;
  }

  get bytesRead() {
    let b = this.doneBytes;
    for (const f of this.inflight.values()) b += f.bytes;
    return b;
  }

  /** fork the reader children (early: SGLang starts its scheduler processes before loading) */
  spawn() {
    if (this.children.length) return this.ready;
    const n = Math.max(1, this.o.readers || 1);
    let readyCount = 0;
    this.ready = new Promise((resolve) => {
      this._readyResolve = resolve;
    });
    this.on('childReady', () => {
      if (++readyCount === n) this._readyResolve();
    });
    for (let i = 0; i < n; i++) {
      const child = fork(path.join(__dirname, 'reader.js'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
      child.busy = 0;
      child.on('message', (m) => this._onMessage(child, m));
      child.on('exit', (code, sig) => {
        this.children = this.children.filter((c) => c !== child);
        if (!this.stopped) this.emit('error', new Error(`reader process ${child.pid} exited (${sig || code})`));
      });
      this.children.push(child);
    }
    return this.ready;
  }

  /** begin reading shards (list of {path,size}) */
  start(shards) {
    if (shards) this.o.shards = shards;
    this.spawn();
    this._dispatch();
  }

  setLimit(n) {
    this.limit = n;
    this._dispatch();
  }

  _dispatch() {
    if (this.stopped) return;
    for (const child of this.children) {
      while (child.busy < 2 && this.o.shards && this.next < this.o.shards.length && this.next < this.limit) {
        const id = this.next++;
        const s = this.o.shards[id];
        const warmBytes = this.o.residentOf(s.path, s.size);
        child.busy++;
        this.inflight.set(id, { child, bytes: 0 });
        const perChild = this.children.length;
        const coldBps = this.o.coldBps / perChild;
        const warmBps = this.o.warmBps / perChild;
        child.send({
          type: 'read',
          id,
          path: s.path,
          size: s.size,
          warmBytes,
          coldBps,
          warmBps,
          direct: this.o.direct,
          // this reader's part of the model (coldRateChange.afterShare counts the reader's own bytes)
          totalBytes: this.o.shards.reduce((n, x) => n + x.size, 0) / perChild,
          chunk: this.o.chunk || chunkFor(Math.min(coldBps, warmBps)),
        });
      }
    }
  }

  _onMessage(child, m) {
    if (m.type === 'ready') this.emit('childReady', child.pid);
    else if (m.type === 'progress') {
      const f = this.inflight.get(m.id);
      if (f) {
        f.bytes = m.bytes;
        this.bytesByFile.set(m.id, m.bytes);
      }
      this.emit('progress', this.bytesRead);
    } else if (m.type === 'done') {
      this.inflight.delete(m.id);
      child.busy--;
      this.doneBytes += m.bytes;
      this.bytesByFile.set(m.id, m.bytes);
      if (m.direct) this.usedDirect = true;
      this.done++;
      this.emit('progress', this.bytesRead);
      this.emit('shard', this.done, this.o.shards[m.id]);
      if (this.done === this.o.shards.length) this.emit('end');
      else this._dispatch();
    } else if (m.type === 'error') {
      this.emit('error', new Error(m.message));
    }
  }

  pause() {
    for (const c of this.children) if (c.connected) c.send({ type: 'pause' });
  }
  resume() {
    for (const c of this.children) if (c.connected) c.send({ type: 'resume' });
  }

  /** file path -> bytes read from its start */
  readMap() {
    const out = {};
    for (const [id, b] of this.bytesByFile) out[this.o.shards[id].path] = b;
    return out;
  }

  stop() {
    this.stopped = true;
    for (const c of this.children) {
      try {
        c.kill('SIGKILL');
      } catch {
        /* gone */
      }
    }
  }

  /** kill the children and wait (at most ms) until they are reaped, so none is left behind as a zombie */
  stopAndWait(ms = 500) {
    const alive = this.children.filter((c) => c.exitCode === null && c.signalCode === null);
    this.stop();
    if (!alive.length) return Promise.resolve();
    return new Promise((resolve) => {
      let left = alive.length;
      const t = setTimeout(resolve, ms);
      for (const c of alive)
        c.once('exit', () => {
          if (--left === 0) {
            clearTimeout(t);
            resolve();
          }
        });
    });
  }
}

module.exports = { listShards, chunkFor, Loader };
