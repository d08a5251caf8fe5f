/**
 * The sampler: one long-lived remote process per watch instead of one exec per poll round.
 * A POSIX sh loop (dash: no Python, Node or awk needed on the host) that prints, each interval,
 * whether the service's main process lives and the bytes its process tree has read, paced by
 * `nvidia-smi -lms` kept running (one process, not one per round) whose lines it passes on.
 * Everything in the loop is a shell builtin: no process is started per round. Pure: the
 * command and the reader of its lines; the watcher runs it.
 */
import { assertAbsolutePath, quote } from '../remote/shell';
import { GPU_QUERY_COMMAND, parseNvidiaSmiCsv } from '../server/gpu';
import type { ProcIo } from '../server/procIo';
import type { Signal } from './loadState';
import { witnessSignals } from './witnessProbe';

/**
 * One round, in sh: `S alive processes unreadable read_bytes rchar cgroup_rbytes|-` and the
 * argument (the previous round's GPU lines) appended.
 * The tree is MainPID and every descendant (ppid from /proc/PID/stat, read after the last ")"
 * since comm may hold spaces), grown to a fixed point; /proc/PID/io is read with `read`.
 */
const TICK = [
  'tick() {',
  '  extra=$1',
  '  alive=0; [ -d /proc/$root ] && alive=1',
  '  pairs=',
  '  for f in /proc/[0-9]*/stat; do',
  '    { read -r l < "$f"; } 2>/dev/null || continue',
  '    r=${l##*) }; set -- $r',
  '    pairs="$pairs ${l%% *}:$2"',
  '  done',
  '  tree=" $root "; more=1',
  '  while [ $more = 1 ]; do',
  '    more=0',
  '    for pp in $pairs; do',
  '      case "$tree" in *" ${pp%%:*} "*) continue;; esac',
  '      case "$tree" in *" ${pp#*:} "*) tree="$tree${pp%%:*} "; more=1;; esac',
  '    done',
  '  done',
  '  n=0; u=0; rb=0; rc=0',
  '  for p in $tree; do',
  '    ok=0',
  '    { while read -r k v; do case $k in read_bytes:) rb=$((rb + v)); ok=1;; rchar:) rc=$((rc + v));; esac; done < /proc/$p/io; } 2>/dev/null',
  '    if [ $ok = 1 ]; then n=$((n + 1)); else u=$((u + 1)); fi',
  '  done',
  '  cgb=-',
  '  if [ -n "$cg" ] && [ -r "/sys/fs/cgroup$cg/io.stat" ]; then',
  '    cgb=0',
  '    while read -r dev rest; do for kv in $rest; do case $kv in rbytes=*) cgb=$((cgb + ${kv#rbytes=}));; esac; done; done < "/sys/fs/cgroup$cg/io.stat"',
  '  fi',
  "  printf 'S %s %s %s %s %s %s%s\\n' $alive $n $u $rb $rc $cgb \"$extra\"",
  '}',
].join('\n');

/** The remote command (sh): the sampler for `mainPid`, one record every `intervalMs`. */
export function samplerCommand(mainPid: number, intervalMs: number, controlGroup?: string): string {
  if (!Number.isInteger(mainPid) || mainPid <= 0) throw new Error(`Invalid PID: ${mainPid}`);
  const ms = Math.max(100, Math.round(intervalMs));
  if (controlGroup) assertAbsolutePath(controlGroup, 'control group');
  const seconds = (ms / 1000).toFixed(3).replace(/\.?0+$/, '');
  const script = [
    `root=${mainPid}; cg=${quote(controlGroup ?? '')}`,
    TICK,
    // Paced by nvidia-smi's own loop: a round at each first GPU's line, every line passed on.
    // One line per round (one SSH packet): the round's record, then the previous round's GPU lines.
    'if command -v nvidia-smi >/dev/null 2>&1; then',
    '  gpus=',
    `  ${GPU_QUERY_COMMAND} -lms ${ms} 2>&1 | while IFS= read -r g; do`,
    '    case $g in 0,*) if [ -n "$gpus" ]; then tick " G$gpus"; gpus=; fi;; esac',
    '    gpus="$gpus;$g"',
    '  done',
    'fi',
    // No GPU tool (or it ended): paced by sleep, one process per round.
    `while :; do tick ''; sleep ${seconds}; done`,
  ].join('\n');
  // A shell command like any other: the transport runs it with sh.
  return script;
}

export interface SamplerRound {
  readonly signals: readonly Signal[];
  /** Whether MainPID still lived at this round. */
  readonly alive?: boolean;
}

/**
 * Turns the sampler's lines into load signals: `io` at each round, and `gpu` from the GPU lines
 * the round carries (`S alive n u read_bytes rchar cgroup|- G;idx, used, total;...`).
 */
export class SamplerReader {
  constructor(private readonly totalBytes: () => number | undefined) {}

  read(line: string, at: number): SamplerRound {
    const m = /^S ([01]) (\d+) (\d+) (\d+) (\d+) (\d+|-)(?: G;(.*))?\s*$/.exec(line);
    if (!m) return { signals: [] };
    const io: ProcIo = {
      processes: Number(m[2]),
      unreadable: Number(m[3]),
      readBytes: Number(m[4]),
      rchar: Number(m[5]),
      ...(m[6] !== '-' ? { cgroupReadBytes: Number(m[6]) } : {}),
    };
    const gpu = m[7] !== undefined ? parseNvidiaSmiCsv(m[7].split(';').join('\n')) : undefined;
    const signals = witnessSignals({ io, gpu }, at, this.totalBytes());
    return { signals, alive: m[1] === '1' };
  }
}
