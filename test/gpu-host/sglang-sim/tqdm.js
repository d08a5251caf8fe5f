'use strict';
// A small re-implementation of tqdm's format_meter (enough for SGLang's two progress bars).

function fmtInterval(t) {
  t = Math.max(0, Math.floor(t));
  const h = Math.floor(t / 3600);
  const m = Math.floor((t % 3600) / 60);
  const s = t % 60;
  const mm = String(m).padStart(2, '0');
  const ss = String(s).padStart(2, '0');
  return h ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

function fmtRate(rate) {
  if (!rate) return '?it/s';
  const inv = 1 / rate;
  if (inv > 1) return `${inv.toFixed(2).padStart(5)}s/it`;
  return `${rate.toFixed(2).padStart(5)}it/s`;
}

const BLOCKS = ' ▏▎▍▌▋▊▉█';
function bar(frac, width = 10) {
  frac = Math.min(1, Math.max(0, frac));
  const full = Math.floor(frac * width);
  const part = Math.floor((frac * width - full) * 8);
  let s = '█'.repeat(full);
  if (full < width) s += (part ? BLOCKS[part] : ' ') + ' '.repeat(width - full - 1);
  return s;
}

function pct(n, total) {
  // python's '{:3.0f}'.format() rounds half to even; tqdm's percentage = n/total*100
  const p = (n / total) * 100;
  let r = Math.round(p);
  if (Math.abs(p - Math.trunc(p) - 0.5) < 1e-9 && Math.trunc(p) % 2 === 0) r = Math.trunc(p);
  return String(r).padStart(3);
}

/** SGLang's weight-loading bar: `{desc}: {percentage:3.0f}% Completed | {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]` */
function shardLine(desc, n, total, elapsed, rate) {
  const remaining = rate ? fmtInterval((total - n) / rate) : '?';
  return `${desc}: ${pct(n, total)}% Completed | ${n}/${total} [${fmtInterval(elapsed)}<${remaining}, ${fmtRate(rate)}]`;
}

/** default tqdm bar: `{desc}: {percentage:3.0f}%|{bar}| {n}/{total} [{elapsed}<{remaining}, {rate_fmt}]` */
function defaultLine(desc, n, total, elapsed, rate) {
  const remaining = rate ? fmtInterval((total - n) / rate) : '?';
  return `${desc ? desc + ': ' : ''}${pct(n, total)}%|${bar(n / total)}| ${n}/${total} [${fmtInterval(elapsed)}<${remaining}, ${fmtRate(rate)}]`;
}

/** tqdm-like rate tracker (exponential moving average, smoothing 0.3) */
class RateMeter {
  constructor(now) {
    this.start = now;
    this.last = now;
    this.lastN = 0;
    this.ema = null;
  }
  update(n, now) {
    const dt = (now - this.last) / 1000;
    const dn = n - this.lastN;
    if (dt > 0 && dn > 0) {
      const r = dn / dt;
      this.ema = this.ema == null ? r : 0.3 * r + 0.7 * this.ema;
      this.last = now;
      this.lastN = n;
    }
    return this.ema;
  }
  overall(n, now) {
    const dt = (now - this.start) / 1000;
    return dt > 0 && n > 0 ? n / dt : null;
  }
  elapsed(now) {
    return (now - this.start) / 1000;
  }
}

module.exports = { fmtInterval, fmtRate, bar, pct, shardLine, defaultLine, RateMeter };
