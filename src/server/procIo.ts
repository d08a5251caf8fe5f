/**
 * Bytes read by the server's processes (reference §3: weights are read through mmap in the
 * per-rank scheduler subprocesses, children of MainPID, so the whole tree is summed) and the
 * size of the model's weights.
 */
import { assertAbsolutePath, quote } from '../remote/shell';

/**
 * One POSIX sh command (dash + awk + /proc only: a minimal Debian host) that prints
 * `processes N`, `unreadable N`, `read_bytes N`, `rchar N` summed over `mainPid` and all its
 * descendants, then `cgroup_rbytes N` when the unit's cgroup io.stat (v2) or
 * blkio.throttle.io_service_bytes (v1) is readable.
 */
export function procIoCommand(mainPid: number, controlGroup?: string): string {
  if (!Number.isInteger(mainPid) || mainPid < 0) throw new Error(`Invalid PID: ${mainPid}`);
  // The ppid tree: field 4 of /proc/PID/stat, read after the last ")" since comm may hold spaces.
  // `read` is a builtin: no fork per process; a process that vanishes mid-scan is skipped.
  const tree =
    `for f in /proc/[0-9]*/stat; do { read -r l < "$f"; } 2>/dev/null && printf '%s\\n' "$l"; done | ` +
    `awk -v root=${mainPid} '{ s = $0; p = 0; while ((k = index(substr(s, p + 1), ")")) > 0) p += k; ` +
    `split(substr(s, p + 2), a, " "); pid = $1; kids[a[2]] = kids[a[2]] " " pid; seen[pid] = 1 } ` +
    `END { if (!(root in seen)) exit; q[1] = root; n = 1; i = 1; while (i <= n) { c = q[i]; print c; ` +
    `m = split(kids[c], ch, " "); for (j = 1; j <= m; j++) { n++; q[n] = ch[j] } i++ } }'`;
  const sum =
    `n=0; u=0; rb=0; rc=0; ` +
    `for p in $pids; do ok=0; ` +
    `{ while read -r k v; do case $k in read_bytes:) rb=$((rb + v)); ok=1;; rchar:) rc=$((rc + v));; esac; done < /proc/$p/io; } 2>/dev/null; ` +
    `if [ $ok = 1 ]; then n=$((n + 1)); else u=$((u + 1)); fi; done; ` +
    `printf 'processes %s\\nunreadable %s\\nread_bytes %s\\nrchar %s\\n' $n $u $rb $rc`;
  let cgroup = '';
  if (controlGroup !== undefined && controlGroup !== '') {
    assertAbsolutePath(controlGroup, 'control group');
    const cg = quote(controlGroup);
    cgroup =
      `; cg=${cg}; ` +
      `if [ -r "/sys/fs/cgroup$cg/io.stat" ]; then ` +
      `awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^rbytes=/) { sub(/^rbytes=/, "", $i); t += $i } } END { printf "cgroup_rbytes %.0f\\n", t }' "/sys/fs/cgroup$cg/io.stat"; ` +
      `elif [ -r "/sys/fs/cgroup/blkio$cg/blkio.throttle.io_service_bytes" ]; then ` +
      `awk '$2 == "Read" { t += $3 } END { printf "cgroup_rbytes %.0f\\n", t }' "/sys/fs/cgroup/blkio$cg/blkio.throttle.io_service_bytes"; fi`;
  }
  return `pids=$(${tree}); ${sum}${cgroup}`;
}

export interface ProcIo {
  /** Bytes the tree caused to be read from storage (cold reads; page-cache hits are not counted). */
  readonly readBytes: number;
  /** Bytes read through read()-like calls, page-cache hits included (mmap faults are not). */
  readonly rchar: number;
  /** Processes whose io was read. */
  readonly processes: number;
  /** Processes of the tree whose /proc/PID/io could not be read (another user, gone). */
  readonly unreadable: number;
  /** The unit cgroup's read bytes, when readable. */
  readonly cgroupReadBytes?: number;
}

export function parseProcIo(text: string): ProcIo | undefined {
  const values = new Map<string, number>();
  for (const line of text.split(/\r?\n/)) {
    const m = /^(processes|unreadable|read_bytes|rchar|cgroup_rbytes) (\d+)\s*$/.exec(line.trim());
    if (m && m[1] && m[2]) values.set(m[1], Number(m[2]));
  }
  const processes = values.get('processes');
  if (processes === undefined) return undefined;
  const cg = values.get('cgroup_rbytes');
  return {
    readBytes: values.get('read_bytes') ?? 0,
    rchar: values.get('rchar') ?? 0,
    processes,
    unreadable: values.get('unreadable') ?? 0,
    ...(cg !== undefined ? { cgroupReadBytes: cg } : {}),
  };
}

/**
 * Sizes of the `*.safetensors` at the top of the model folder (where SGLang globs them),
 * following symlinks (Hugging Face cache snapshots link to blobs). GNU find, always on Debian.
 */
export function modelSizeCommand(modelPath: string): string {
  assertAbsolutePath(modelPath, 'model path');
  return `find -L ${quote(modelPath)} -maxdepth 1 -type f -name '*.safetensors' -printf '%s\\n'`;
}

export interface ModelSize {
  readonly bytes: number;
  readonly files: number;
}

export function parseModelSize(text: string): ModelSize {
  let bytes = 0;
  let files = 0;
  for (const line of text.split(/\r?\n/)) {
    const t = line.trim();
    if (!/^\d+$/.test(t)) continue;
    bytes += Number(t);
    files++;
  }
  return { bytes, files };
}
