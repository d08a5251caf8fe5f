'use strict';
// State of the simulated host:
//   gpu.json under $KIMI_SIM_ROOT  {"pid":N,"updatedAt":ISO,"gpus":[{"index":0,"memoryUsedMiB":N,"memoryTotalMiB":81920},...]}
//   the page cache is the REAL kernel page cache of the model files: measured with util-linux
//   `fincore --bytes --noheadings --raw`, evicted with GNU dd (`iflag=nocache count=0`: posix_fadvise
//   DONTNEED over the whole file; dirty pages are not dropped, so files must be written back first),
//   filled with plain reads.
// Usable as a CLI too:  node state.js residency|evict|warm FILE...
const fs = require('fs');
const path = require('path');
const { execFileSync, spawn, spawnSync } = require('child_process');

function writeJsonAtomic(file, obj) {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(obj));
  fs.renameSync(tmp, file);
}

/**
 * Real page-cache residency: Map path -> resident bytes (capped at the size), or null when it
 * cannot be measured (no fincore). Files fincore cannot read count as 0.
 */
function measureResidency(files) {
  const out = new Map();
  if (!files.length) return out;
  let text;
  try {
    text = execFileSync('fincore', ['--bytes', '--noheadings', '--raw', '--output', 'RES,SIZE,FILE', '--', ...files], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 16 << 20,
    });
  } catch (e) {
    if (e && e.code === 'ENOENT') return null;
    text = (e && e.stdout) || ''; // some files failed: keep the others
  }
  const sizes = new Map(
    files.map((f) => {
      let s = 0;
      try {
        s = fs.statSync(f).size;
      } catch {
        /* gone */
      }
      return [f, s];
    }),
  );
  const lines = text.split('\n').filter(Boolean);
  // fincore prints the files in argument order; names may be escaped, so match by order, falling back to the name
  let i = 0;
  for (const line of lines) {
    const m = /^(\d+) (\d+) (.*)$/.exec(line);
    if (!m) continue;
    let f = files[i];
    if (f === undefined || (m[3] !== f && files.includes(m[3]))) f = m[3];
    i++;
    out.set(f, Math.min(Number(m[1]), sizes.get(f) ?? Number(m[2])));
  }
  for (const f of files) if (!out.has(f)) out.set(f, 0);
  return out;
}

/** Drop the files' clean pages from the page cache (GNU dd: posix_fadvise POSIX_FADV_DONTNEED). */
function evict(files) {
  for (const f of files) {
    spawnSync('dd', [`if=${f}`, 'iflag=nocache', 'count=0', 'status=none'], { stdio: 'ignore' });
  }
}

/**
 * Read the files into the page cache with plain reads, in a process that is NOT a descendant of this
 * one (a subshell orphaned at once, reaped by init): its reads must not count in the server's
 * /proc/PID/io (a reaped child's I/O is added to its parent's). Returns when the reads are done
 * (the orphan holds our stdout pipe until it ends).
 */
function preRead(files) {
  if (!files.length) return;
  // (the trailing echo keeps the subshell from exec'ing cat, which would close our pipe early)
  spawnSync('sh', ['-c', '(cat -- "$@" >/dev/null 2>&1; echo done) &', 'sh', ...files], {
    stdio: ['ignore', 'pipe', 'ignore'],
    timeout: 600000,
  });
}

/** preRead without blocking: resolves when the orphaned reader is done. */
function preReadAsync(files) {
  if (!files.length) return Promise.resolve();
  return new Promise((resolve) => {
    const c = spawn('sh', ['-c', '(cat -- "$@" >/dev/null 2>&1; echo done) &', 'sh', ...files], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    c.stdout.on('data', () => {});
    c.stdout.on('close', () => resolve());
    c.on('error', () => resolve());
  });
}

/**
 * Apply sim.json coldFiles to the model files ([{path,size}]) in the real page cache:
 * "all": evict all; "none": read all in; [names] (basename or path): evict those, read the others in.
 * Returns the paths meant to be cold (an eviction the kernel ignored, e.g. on tmpfs, still counts as cold).
 */
function applyColdFiles(modelFiles, coldFiles) {
  if (coldFiles == null) return new Set();
  const cold = [];
  const warm = [];
  // {coldShare: x}: the first x of the shards (in name order, as they are read) cold, the others warm
  const share =
    coldFiles && typeof coldFiles === 'object' && !Array.isArray(coldFiles) ? Number(coldFiles.coldShare) : NaN;
  const coldNames = Number.isFinite(share)
    ? new Set(
        modelFiles
          .map((f) => f.path)
          .sort()
          .slice(0, Math.round(Math.min(1, Math.max(0, share)) * modelFiles.length)),
      )
    : null;
  for (const f of modelFiles) {
    let isCold;
    if (coldNames) isCold = coldNames.has(f.path);
    else if (coldFiles === 'all') isCold = true;
    else if (coldFiles === 'none') isCold = false;
    else if (Array.isArray(coldFiles)) isCold = coldFiles.includes(path.basename(f.path)) || coldFiles.includes(f.path);
    else continue;
    (isCold ? cold : warm).push(f.path);
  }
  evict(cold);
  preRead(warm);
  return new Set(cold);
}

function writeGpu(root, pid, usedMiB, totalMiB, utilizationGpu = 0) {
  writeJsonAtomic(path.join(root, 'gpu.json'), {
    pid,
    updatedAt: new Date().toISOString(),
    gpus: usedMiB.map((m, i) => ({ index: i, memoryUsedMiB: Math.round(m), memoryTotalMiB: totalMiB, utilizationGpu })),
  });
}

module.exports = { writeJsonAtomic, measureResidency, evict, preRead, preReadAsync, applyColdFiles, writeGpu };

if (require.main === module) {
  const [cmd, ...rest] = process.argv.slice(2);
  const files = rest.map((f) => path.resolve(f));
  if (cmd === 'residency') {
    const r = measureResidency(files);
    if (!r) {
      process.stderr.write('fincore not found\n');
      process.exit(1);
    }
    for (const [f, b] of r) process.stdout.write(`${b} ${fs.statSync(f).size} ${f}\n`);
  } else if (cmd === 'evict') evict(files);
  else if (cmd === 'warm') preRead(files);
  else {
    process.stderr.write('usage: node state.js residency|evict|warm FILE...\n');
    process.exit(2);
  }
}
