'use strict';
// Log line formatting as SGLang prints it: `[YYYY-mm-dd HH:MM:SS TPn] msg` for scheduler (per-rank) lines,
// `[YYYY-mm-dd HH:MM:SS] msg` for the main process, bare `INFO:     ...` for uvicorn.
// Python logging goes to stderr; uvicorn's access log goes to stdout.
const fs = require('fs');

function ts(d = new Date()) {
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

function prefix(rank, d) {
  return rank == null ? `[${ts(d)}] ` : `[${ts(d)} TP${rank}] `;
}

class Logger {
  /** @param {{tp:number, base?:number, out?:(s:string)=>void, err?:(s:string)=>void}} o  tp ranks of this node, from TP`base` */
  constructor(o) {
    this.tp = o.tp;
    this.base = o.base || 0;
    this.out = o.out || ((s) => writeAll(1, s));
    this.err = o.err || ((s) => writeAll(2, s));
  }
  main(msg) {
    this.err(prefix(null) + msg + '\n');
  }
  rank(r, msg) {
    this.err(prefix(r) + msg + '\n');
  }
  allRanks(msg) {
    for (let r = this.base; r < this.base + this.tp; r++) this.rank(r, typeof msg === 'function' ? msg(r) : msg);
  }
  uvicorn(msg) {
    this.err(`INFO:     ${msg}\n`);
  }
  uvicornError(msg) {
    this.err(`ERROR:    ${msg}\n`);
  }
  access(client, method, url, status) {
    this.out(`INFO:     ${client} - "${method} ${url} HTTP/1.1" ${status} ${STATUS_TEXT[status] || ''}\n`);
  }
  raw(s) {
    this.err(s);
  }
}

// synchronous writes keep order between our stdout/stderr and survive process.exit()
function writeAll(fd, s) {
  const b = Buffer.from(s, 'utf8');
  let off = 0;
  while (off < b.length) {
    try {
      off += fs.writeSync(fd, b, off, b.length - off);
    } catch (e) {
      if (e.code === 'EAGAIN') continue;
      return; // EPIPE etc.: nobody listens
    }
  }
}

const STATUS_TEXT = {
  200: 'OK',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  422: 'Unprocessable Entity',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

module.exports = { ts, prefix, Logger, writeAll, STATUS_TEXT };
