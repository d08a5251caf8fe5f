/**
 * The sampler: one long-lived remote process per watch instead of one exec per poll round.
 * A POSIX sh loop (dash: no Python, Node or awk needed on the host) that prints, each interval,
 * whether the service's main process lives and the bytes its process tree has read, paced by
 * `nvidia-smi -lms` kept running (one process, not one per round) whose lines it passes on.
 * Everything in the loop is a shell builtin: no process is started per round. Pure: the
 * command and the reader of its lines; the watcher runs it.
 */
import { assertAbsolutePath, quote } from '../../transport/shell';
import type { GpuMemory } from '../../engine/events';
import { GPU_QUERY_COMMAND, type GpuReading } from '../../host/gpu';
import { modelSizeCommand, type ModelSize, type ProcIo } from '../../host/procIo';
import type { Signal } from '../state/loadStateTypes';
import { witnessSignals } from './witnessProbe';
import { parsePortOwnerLine, PORT_OWNER_SH, type PortOwner } from '../../host/portOwner';
import { HOST_ADDRESSES_SH, parseHostAddressesLine } from '../../host/hostAddresses';
import { noMemoryReadings } from '../../present/words/watchWords';

/** The sampler's GPU query: memory, and the utilisation a busy silence shows (a JIT compile's kernels, a spinning collective). */
const SAMPLER_GPU_QUERY = GPU_QUERY_COMMAND.replace('memory.total', 'memory.total,utilization.gpu');

/**
 * One round, in sh: `S alive processes unreadable read_bytes rchar cgroup_rbytes|-` and the
 * argument (the previous round's GPU lines) appended, then ` Cticks:hz:cgroup_usage_usec|-`: the
 * CPU time of the tree (utime+stime+cutime+cstime of each process: a reaped child's time moves
 * into its parent's, so the sum does not drop when a compiler process ends) and of the cgroup.
 * The tree is MainPID and every descendant (ppid from /proc/PID/stat, read after the last ")"
 * since comm may hold spaces), grown to a fixed point; /proc/PID/io is read with `read`.
 */
const TICK = [
  'tick() {',
  '  extra=$1',
  '  alive=0; for r in $roots; do [ -d /proc/$r ] && alive=1; done',
  '  pairs=',
  '  for f in /proc/[0-9]*/stat; do',
  '    { read -r l < "$f"; } 2>/dev/null || continue',
  '    r=${l##*) }; set -- $r',
  '    pairs="$pairs ${l%% *}:$2"',
  '  done',
  '  tree=" $roots "; more=1',
  '  while [ $more = 1 ]; do',
  '    more=0',
  '    for pp in $pairs; do',
  '      case "$tree" in *" ${pp%%:*} "*) continue;; esac',
  '      case "$tree" in *" ${pp#*:} "*) tree="$tree${pp%%:*} "; more=1;; esac',
  '    done',
  '  done',
  '  n=0; u=0; rb=0; rc=0; ct=0',
  '  for p in $tree; do',
  '    { read -r l < /proc/$p/stat; } 2>/dev/null && { r=${l##*) }; set -- $r; ct=$((ct + ${12} + ${13} + ${14} + ${15})); }',
  '    ok=0',
  '    { while read -r k v; do case $k in read_bytes:) rb=$((rb + v)); ok=1;; rchar:) rc=$((rc + v));; esac; done < /proc/$p/io; } 2>/dev/null',
  '    if [ $ok = 1 ]; then n=$((n + 1)); else u=$((u + 1)); fi',
  '  done',
  '  cgb=-',
  '  if [ -n "$cg" ] && [ -r "/sys/fs/cgroup$cg/io.stat" ]; then',
  '    cgb=0',
  '    while read -r dev rest; do for kv in $rest; do case $kv in rbytes=*) cgb=$((cgb + ${kv#rbytes=}));; esac; done; done < "/sys/fs/cgroup$cg/io.stat"',
  '  fi',
  '  cgc=-',
  '  if [ -n "$cg" ] && [ -r "/sys/fs/cgroup$cg/cpu.stat" ]; then',
  '    while read -r k v; do case $k in usage_usec) cgc=$v;; esac; done < "/sys/fs/cgroup$cg/cpu.stat"',
  '  fi',
  '  cpu=',
  '  [ $alive = 1 ] && cpu=" C$ct:$hz:$cgc"',
  '  lst=',
  '  if [ -n "$lp" ]; then',
  '    portscan',
  '    lst=" L$l"',
  '    # Who holds the listening socket: looked up once per socket (a find), not per round.',
  '    if [ "$ino" != "$seen" ]; then seen=$ino; [ -n "$ino" ] && portowner "$ino"; fi',
  '  fi',
  '  printf \'S %s %s %s %s %s %s%s%s%s\\n\' $alive $n $u $rb $rc $cgb "$lst" "$extra" "$cpu"',
  '}',
].join('\n');

export interface SamplerOptions {
  readonly mainPid: number;
  readonly intervalMs: number;
  /** The unit's control group (cgroup v2 io.stat): reads its tree's /proc cannot show. */
  readonly controlGroup?: string | undefined;
  /** A line `M files bytes`: the *.safetensors there (the 100 % of the bytes witness). */
  readonly modelPath?: string | undefined;
  /**
   * Each record says whether a socket listens on this TCP port (` L1`/` L0`, from /proc/net/tcp*),
   * and a line `O ...` before it says who holds that socket each time it is a new one (host/portOwner.ts).
   */
  readonly listenPort?: number | undefined;
  /** First line `A v4... / v6hex...`: the addresses the host's interfaces carry (host/hostAddresses.ts). */
  readonly hostAddresses?: boolean;
  /**
   * sh that finds the server's processes where the sampler runs (another node than the SSH host:
   * the target's ServerNodeShell) and sets `roots`, instead of `mainPid`; the sampler's first line
   * is then `R PID...`: those processes.
   */
  readonly rootsSh?: string;
}

/**
 * The remote command (sh): the sampler for `mainPid`, one record every `intervalMs`:
 * `S alive processes unreadable read_bytes rchar cgroup_rbytes|- [L0|L1] [Uused,...] [Ttotal,...]`,
 * GPU memory as used MiB per GPU, the totals only when they change (the first record). Asked for
 * the model size, a line says that, read by the same session instead of a command of its own; asked
 * for the host's addresses, its first line is those (`A ...`, host/hostAddresses.ts).
 */
export function samplerCommand(options: SamplerOptions): string {
  const { mainPid, controlGroup, modelPath, listenPort, rootsSh } = options;
  // The host's own addresses, once: whether an address the server announces is this host's.
  const addresses = options.hostAddresses ? [HOST_ADDRESSES_SH, 'hostaddrs'] : [];
  if (rootsSh === undefined && (!Number.isInteger(mainPid) || mainPid <= 0)) throw new Error(`Invalid PID: ${mainPid}`);
  const roots =
    rootsSh === undefined ? [`root=${mainPid}; roots=$root`] : [rootsSh, 'root=${roots%% *}', 'echo "R $roots"'];
  if (listenPort !== undefined && !(Number.isInteger(listenPort) && listenPort > 0 && listenPort < 65536))
    throw new Error(`Invalid port: ${listenPort}`);
  const ms = Math.max(100, Math.round(options.intervalMs));
  if (controlGroup) assertAbsolutePath(controlGroup, 'control group');
  const seconds = (ms / 1000).toFixed(3).replace(/\.?0+$/, '');
  const modelSize =
    modelPath === undefined
      ? []
      : [
          `${modelSizeCommand(modelPath)} 2>/dev/null | { files=0; bytes=0; while read -r size; do files=$((files + 1)); bytes=$((bytes + size)); done; echo "M $files $bytes"; }`,
        ];
  // /proc/net/tcp writes the local port as 4 upper-case hex digits.
  const portHex = listenPort === undefined ? '' : listenPort.toString(16).toUpperCase().padStart(4, '0');
  const script = [
    ...roots,
    `cg=${quote(controlGroup ?? '')}; lp=${portHex}; seen=`,
    // Clock ticks per second of /proc/PID/stat's times (one getconf, at the start).
    "hz=$(getconf CLK_TCK 2>/dev/null); case $hz in ''|*[!0-9]*) hz=100;; esac",
    ...addresses,
    ...modelSize,
    PORT_OWNER_SH,
    TICK,
    // Paced by nvidia-smi's own loop: a round at each first GPU's line. One line per round (one
    // SSH packet): the round's record, then the previous round's GPU memory.
    'if command -v nvidia-smi >/dev/null 2>&1; then',
    '  used=; totals=; utils=; sent=',
    `  ${SAMPLER_GPU_QUERY} -lms ${ms} 2>/dev/null | while IFS= read -r g; do`,
    '    case $g in 0,*) if [ -n "$used" ]; then',
    '      if [ "$totals" = "$sent" ]; then tick " U${used#,} P${utils#,}"; else tick " U${used#,} T${totals#,} P${utils#,}"; sent=$totals; fi',
    '      used=; totals=; utils=',
    '    fi;; esac',
    // index, used, total, utilization: `[N/A]`, `[Not Supported]` become `-` (no space may enter the record).
    '    case $g in [0-9]*,*,*) r=${g#*,}; u=${r%%,*}; r=${r#*,}; t=${r%%,*}; p=${r#*,}; [ "$p" = "$r" ] && p=; p=${p# }; case $p in \'\'|*[!0-9]*) p=-;; esac; used="$used,${u# }"; totals="$totals,${t# }"; utils="$utils,$p";; esac',
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
  /** The model's size, from the sampler's line `M` when it was asked for. */
  readonly modelSize?: ModelSize;
  /** Whether a socket listened on the asked port at this round. */
  readonly listening?: boolean;
  /** Who holds the socket listening on the asked port (a line of its own, when that socket is new). */
  readonly portOwner?: PortOwner;
  /** The addresses the host's interfaces carry (the sampler's first line, `A`). */
  readonly hostAddresses?: readonly string[];
  /** The server's processes the sampler found where it runs (its first line `R`, asked with `rootsSh`). */
  readonly roots?: readonly number[];
}

/**
 * Turns the sampler's lines into load signals: `io` at each round, and `gpu` from the used
 * memory the round carries, with the totals its first GPU record gave.
 */
export class SamplerReader {
  private totalsMiB: readonly (number | undefined)[] = [];

  constructor(private readonly totalBytes: () => number | undefined) {}

  read(line: string, at: number): SamplerRound {
    // At most 20 digits (sh's 64-bit arithmetic): 400 digits would read as Infinity bytes.
    const size = /^M (\d{1,20}) (\d{1,20})\s*$/.exec(line);
    if (size) return { signals: [], modelSize: { files: Number(size[1]), bytes: Number(size[2]) } };
    const roots = /^R((?: \d{1,10}){1,64})\s*$/.exec(line);
    if (roots) return { signals: [], roots: (roots[1] ?? '').trim().split(' ').map(Number) };
    const hostAddresses = parseHostAddressesLine(line);
    if (hostAddresses) return { signals: [], hostAddresses };
    const portOwner = parsePortOwnerLine(line);
    if (portOwner) return { signals: [], portOwner };
    const m =
      /^S ([01]) (\d{1,20}) (\d{1,20}) (\d{1,20}) (\d{1,20}) (\d{1,20}|-)(?: L([01]))?(?: U(\S*))?(?: T(\S*))?(?: P(\S*))?(?: C(\d{1,20}):(\d{1,20}):(\d{1,20}|-))?\s*$/.exec(
        line,
      );
    if (!m) return { signals: [] };
    const io: ProcIo = {
      processes: Number(m[2]),
      unreadable: Number(m[3]),
      readBytes: Number(m[4]),
      rchar: Number(m[5]),
      ...(m[6] !== '-' ? { cgroupReadBytes: Number(m[6]) } : {}),
    };
    if (m[9] !== undefined) this.totalsMiB = m[9].split(',').map(mib);
    const gpu = m[8] !== undefined ? this.gpuReading(m[8], m[10]) : undefined;
    const cpuSeconds =
      m[11] !== undefined
        ? cpuSecondsOf(Number(m[11]), Number(m[12]), m[13] === '-' ? undefined : Number(m[13]))
        : undefined;
    const signals = witnessSignals(
      { io, gpu, ...(cpuSeconds !== undefined ? { cpuSeconds } : {}) },
      at,
      this.totalBytes(),
    );
    return { signals, alive: m[1] === '1', ...(m[7] !== undefined ? { listening: m[7] === '1' } : {}) };
  }

  private gpuReading(usedList: string, utilList: string | undefined): GpuReading {
    const gpus: GpuMemory[] = [];
    usedList.split(',').forEach((text, index) => {
      const usedMiB = mib(text);
      const totalMiB = this.totalsMiB[index];
      if (usedMiB !== undefined && totalMiB !== undefined) gpus.push({ index, usedMiB, totalMiB });
    });
    const utils = (utilList ?? '')
      .split(',')
      .map(mib)
      .filter((u): u is number => u !== undefined && u <= 100);
    if (gpus.length === 0) return { gpus, reason: noMemoryReadings() };
    return utils.length > 0 ? { gpus, utilPercent: Math.max(...utils) } : { gpus };
  }
}

/** The cgroup's figure when it has one (it counts every process of the unit), else the tree's ticks. */
function cpuSecondsOf(ticks: number, hz: number, cgroupUsec: number | undefined): number | undefined {
  if (cgroupUsec !== undefined) return cgroupUsec / 1e6;
  return hz > 0 ? ticks / hz : undefined;
}

/** A MiB figure as nvidia-smi prints it with nounits; `[N/A]` and the like are no reading. */
function mib(text: string): number | undefined {
  return /^\d{1,15}$/.test(text) ? Number(text) : undefined;
}
