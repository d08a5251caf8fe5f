'use strict';
/*
 * The multi-node rendezvous of the simulator (--nnodes N --node-rank R --dist-init-addr HOST:PORT
 * [--dist-timeout S]), over a real TCP connection as torch's TCPStore does: node rank 0 listens on
 * PORT (all addresses), the other nodes connect to HOST:PORT (retrying) and wait; every node waits
 * for all within --dist-timeout. Then one barrier after the weights are loaded (SGLang's
 * monitored_barrier, UNBALANCED_MODEL_LOADING_TIMEOUT_S, sim.json unbalancedLoadingTimeoutSeconds).
 * Failures print what torch / SGLang print (texts of c10d TCPStore.cpp, socket.cpp and
 * sglang/srt/model_executor/model_runner.py).
 *
 * Protocol (lines): client -> "hello R\n"; rank 0 -> "go\n" once every node said hello;
 * client -> "loaded R\n"; rank 0 -> "all-loaded\n" once every node (itself included) has loaded.
 */
const net = require('net');
const readline = require('readline');

const SITE = '/opt/sglang/lib/python3.12/site-packages';

/** "HOST:PORT" or "[v6]:PORT" -> {host, port}; null when malformed */
function parseAddr(text) {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(String(text || ''));
  if (!m) return null;
  const port = Number(m[3]);
  if (!(port > 0 && port < 65536)) return null;
  return { host: m[1] || m[2], port };
}

/** c10d's log line prefix: [E1130 14:30:01.123456789 socket.cpp:1028] */
function c10dPrefix(level, file) {
  const d = new Date();
  const p = (n, w = 2) => String(n).padStart(w, '0');
  const ns = `${p(d.getMilliseconds(), 3)}000000`;
  return `[${level}${p(d.getMonth() + 1)}${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${ns} ${file}]`;
}

function initFrames() {
  return [
    `  File "${SITE}/sglang/srt/model_executor/model_runner.py", line 571, in init_torch_distributed`,
    '    init_distributed_environment(',
    `  File "${SITE}/sglang/srt/distributed/parallel_state.py", line 1355, in init_distributed_environment`,
    '    torch.distributed.init_process_group(',
    `  File "${SITE}/torch/distributed/c10d_logger.py", line 81, in wrapper`,
    '    return func(*args, **kwargs)',
    `  File "${SITE}/torch/distributed/distributed_c10d.py", line 1710, in init_process_group`,
    '    store, rank, world_size = next(rendezvous_iterator)',
  ];
}

function traceback(frames, exceptionLine) {
  return [
    'Scheduler hit an exception: Traceback (most recent call last):',
    `  File "${SITE}/sglang/srt/managers/scheduler.py", line 2702, in run_scheduler_process`,
    '    scheduler = Scheduler(',
    ...frames,
    exceptionLine,
  ].join('\n');
}

class Rendezvous {
  /**
   * @param {{nnodes:number,nodeRank:number,addr:{host:string,port:number},timeoutS:number,tpPerNode:number,log:object,firstRank:number}} o
   */
  constructor(o) {
    this.o = o;
    this.server = null;
    this.peers = new Map(); // rank 0: node rank -> socket
    this.socket = null; // other ranks: the connection to rank 0
    this.loaded = new Set();
    this.waiters = [];
    this.closed = false;
  }

  /** resolves when every node has joined; rejects with the error text already logged */
  join() {
    return this.o.nodeRank === 0 ? this.listen() : this.connect();
  }

  listen() {
    const { nnodes, addr, timeoutS, tpPerNode } = this.o;
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const server = net.createServer((sock) => {
        sock.on('error', () => {});
        onLines(sock, (line) => {
          const m = /^(hello|loaded) (\d+)$/.exec(line);
          if (!m) return;
          const rank = Number(m[2]);
          if (m[1] === 'hello') {
            this.peers.set(rank, sock);
            if (this.peers.size === nnodes - 1) {
              clearTimeout(timer);
              for (const s of this.peers.values()) s.write('go\n');
              resolve();
            }
          } else this.markLoaded(rank);
        });
      });
      this.server = server;
      const timer = setTimeout(
        () => {
          const joined = (this.peers.size + 1) * tpPerNode;
          const elapsed = Math.floor((Date.now() - started) / 1000);
          const text = `Timed out after ${elapsed} seconds waiting for clients. ${joined}/${nnodes * tpPerNode} clients joined.`;
          this.rendezvousFailed('DistStoreError', text);
          reject(new Error(text));
        },
        timeoutS * 1000 + 1000,
      );
      server.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      server.listen(addr.port);
    });
  }

  connect() {
    const { nodeRank, addr, timeoutS } = this.o;
    const deadline = Date.now() + timeoutS * 1000;
    return new Promise((resolve, reject) => {
      const attempt = () => {
        if (this.closed) return;
        if (Date.now() >= deadline) {
          const text = `The client socket has timed out after ${timeoutS * 1000}ms while trying to connect to (${addr.host}, ${addr.port}).`;
          this.o.log.raw(`${c10dPrefix('E', 'socket.cpp:1028')} [c10d] ${text}\n`);
          this.rendezvousFailed('DistNetworkError', text);
          reject(new Error(text));
          return;
        }
        const sock = net.connect({ host: addr.host, port: addr.port });
        let up = false;
        const retry = () => {
          if (!up) setTimeout(attempt, 250);
        };
        sock.setTimeout(1000, () => {
          if (!up) sock.destroy();
        });
        sock.on('connect', () => {
          up = true;
          sock.setTimeout(0);
          this.socket = sock;
          sock.write(`hello ${nodeRank}\n`);
        });
        sock.on('error', () => {});
        sock.on('close', () => {
          if (!up) retry();
          else if (this.socket === sock) this.socket = null;
        });
        onLines(sock, (line) => {
          if (line === 'go') resolve();
          if (line === 'all-loaded') this.markAllLoaded();
        });
      };
      attempt();
    });
  }

  /** torch's traceback when the c10d store cannot be made (rank 0 waiting, or a node connecting). */
  rendezvousFailed(errorClass, text) {
    this.o.log.rank(
      this.o.firstRank,
      traceback(
        [
          ...initFrames(),
          `  File "${SITE}/torch/distributed/rendezvous.py", line 189, in _create_c10d_store`,
          '    return TCPStore(',
        ],
        `torch.distributed.${errorClass}: ${text}`,
      ),
    );
  }

  markLoaded(rank) {
    this.loaded.add(rank);
    if (this.o.nodeRank === 0 && this.loaded.size === this.o.nnodes) {
      for (const s of this.peers.values()) {
        try {
          s.write('all-loaded\n');
        } catch {
          /* gone */
        }
      }
      this.markAllLoaded();
    }
  }

  markAllLoaded() {
    this.allLoaded = true;
    for (const w of this.waiters.splice(0)) w();
  }

  /** the barrier after the weights; rejects (after logging SGLang's ValueError) on timeout */
  loadedBarrier(timeoutS) {
    const { nodeRank, log, firstRank, tpPerNode } = this.o;
    if (nodeRank === 0) this.markLoaded(0);
    else if (this.socket) this.socket.write(`loaded ${nodeRank}\n`);
    if (this.allLoaded) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        for (let r = firstRank; r < firstRank + tpPerNode; r++) {
          log.rank(
            r,
            traceback(
              [
                `  File "${SITE}/sglang/srt/model_executor/model_runner.py", line 760, in load_model`,
                '    raise ValueError(',
              ],
              `ValueError: TP rank ${r} could finish the model loading, but there are other ranks that didn't finish loading. It is likely due to unexpected failures (e.g., OOM) or a slow node.`,
            ),
          );
        }
        reject(new Error('unbalanced loading'));
      }, timeoutS * 1000);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  close() {
    this.closed = true;
    if (this.server) {
      try {
        this.server.close();
      } catch {
        /* */
      }
    }
    for (const s of this.peers.values()) s.destroy();
    if (this.socket) this.socket.destroy();
  }
}

/**
 * Each line a peer sends (the rendezvous protocol is one word or two per line). A socket's error
 * (refused, reset) is handled where the socket is made; readline passes it on too: ignored here.
 */
function onLines(sock, handle) {
  readline
    .createInterface({ input: sock, crlfDelay: Infinity })
    .on('line', handle)
    .on('error', () => {});
}

module.exports = { Rendezvous, parseAddr };
