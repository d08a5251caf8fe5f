/**
 * The commands a batch-job target runs on the login node, as HostCommands: constant scripts
 * (`sh -c SCRIPT sh VALUES...`) whose values (the job name, ids, paths) arrive as `$1`, `$2`,
 * never spliced in. Pure. Each is checked here before it is sent.
 */
import { SLURM_JOB_NAME, isValidScriptPath } from '../../config/names';
import type { HostCommand } from '../../transport/shell';

const JOB_ID = /^\d{1,12}$/;

function checkName(name: string): string {
  if (!SLURM_JOB_NAME.test(name)) throw new Error(`Invalid Slurm job name: ${JSON.stringify(name)}`);
  return name;
}

function checkId(id: string): string {
  if (!JOB_ID.test(id)) throw new Error(`Invalid Slurm job id: ${JSON.stringify(id)}`);
  return id;
}

function checkPath(path: string, what: string): string {
  if (!isValidScriptPath(path)) throw new Error(`Invalid ${what}: ${JSON.stringify(path)}`);
  return path;
}

/**
 * The job named `$1` of the login user, newest first (`squeue --me -t all`: ended jobs too, for
 * MinJobAge), else the one last seen (`$2`): prints `tz=` (the login node's offset: Slurm's
 * times carry no zone), then `none`, or `id=N`, scontrol's line or its error, and squeue's
 * estimated start (`start=`), and the job's nodes in order (`hosts=`, scontrol show hostnames);
 * `error=` when squeue itself failed. For a cancelled job or one the
 * controller forgot, sacct's State and ExitCode (`sacct=`: `CANCELLED by 0|0:15`, or its error
 * when the cluster keeps no accounting) and the canceller's user name (`by=`).
 */
export function stateCommand(name: string, lastId: string | undefined): HostCommand {
  const script = [
    'echo "tz=$(date +%z)"',
    'ids=$(squeue --me -h -t all -n "$1" -o %i 2>&1) || { echo "error=$(printf %s "$ids" | tr "\\n" " ")"; exit 0; }',
    'id=$(printf "%s\\n" $ids | grep -E "^[0-9]+$" | sort -n | tail -n 1)',
    '[ -n "$id" ] || id=$2',
    'if [ -z "$id" ]; then echo none; exit 0; fi',
    'echo "id=$id"',
    'j=$(scontrol show job -o "$id" 2>&1); printf "%s\\n" "$j"',
    // The node list in order (rank 0 on the first), only when scontrol printed one of plain node-list characters.
    'nl=${j##* NodeList=}; nl=${nl%% *}; case "$j" in *" NodeList="*) case "$nl" in ""|"(null)"|*[!A-Za-z0-9_.,[\\]-]*) ;; *) echo "hosts=$(scontrol show hostnames "$nl" 2>/dev/null | head -n 256 | tr "\\n" " ")";; esac;; esac',
    // Who cancelled a job, and how a job gone from the controller ended, only accounting knows.
    'case "$j" in *"Invalid job id"*|*" JobState=CANCELLED "*) a=$(sacct -X -n -P -j "$id" -o State,ExitCode 2>&1 | head -n 1); echo "sacct=$a"; u=${a#CANCELLED by }; u=${u%%|*}; case "$u" in ""|*[!0-9]*) ;; *) echo "by=$(getent passwd "$u" | cut -d: -f1)";; esac;; esac',
    'squeue -h --start -j "$id" -o "start=%S" 2>/dev/null',
    'exit 0',
  ].join('; ');
  return { argv: ['sh', '-c', script, 'sh', checkName(name), lastId === undefined ? '' : checkId(lastId)] };
}

/** `scontrol requeue ID`: the same job back in the queue (its process ends, its output file starts again). */
export function requeueCommand(id: string): HostCommand {
  return { argv: ['scontrol', 'requeue', checkId(id)], stderrToStdout: true };
}

/**
 * Cancels job `$3` when one is given (and waits until it has left the running states, at most a
 * minute, so two servers never share the node), then submits the script `$1` (`~/` is the login
 * user's home) as job name `$4`, from the working directory `$2` (else the script's folder), as
 * the user would by hand. Prints sbatch's job id.
 */
export function resubmitCommand(
  script: string,
  workDir: string | undefined,
  cancelId: string | undefined,
  name: string,
): HostCommand {
  const text = [
    'if [ -n "$3" ]; then scancel "$3" || exit $?',
    '  n=0; while [ $n -lt 60 ]; do st=$(squeue -h -j "$3" -o %T 2>/dev/null); case "$st" in RUNNING|COMPLETING|CONFIGURING|SUSPENDED) sleep 1; n=$((n+1));; *) break;; esac; done',
    'fi',
    'case "$1" in "~/"*) s="$HOME/${1#??}";; *) s=$1;; esac',
    'd=$2; [ -n "$d" ] || d=$(dirname -- "$s")',
    'cd -- "$d" && exec sbatch --parsable -J "$4" -- "$s"',
  ].join('\n');
  return {
    argv: [
      'sh',
      '-c',
      text,
      'sh',
      checkPath(script, 'batch script path'),
      workDir === undefined ? '' : checkPath(workDir, 'working directory'),
      cancelId === undefined ? '' : checkId(cancelId),
      checkName(name),
    ],
    stderrToStdout: true,
  };
}

/**
 * Follows the output file `$1` of job `$2` from its first line (`tail -F`: a requeue truncates
 * it, and it may not exist yet while the job waits), and ends once the job has left the queue
 * and the running states (checked every 2 s), a second after, for its last lines.
 */
export function followCommand(file: string, id: string): HostCommand {
  const script = [
    'tail -n +1 -F -- "$1" & t=$!',
    "trap 'kill $t 2>/dev/null' EXIT HUP INT TERM",
    'while kill -0 $t 2>/dev/null; do sleep 2; st=$(squeue -h -j "$2" -o %T 2>/dev/null); case "$st" in PENDING|CONFIGURING|RUNNING|COMPLETING|SUSPENDED|REQUEUED*|RESIZING) ;; *) break;; esac; done',
    'sleep 1',
  ].join('\n');
  return { argv: ['sh', '-c', script, 'sh', checkPath(file, 'job output file'), checkId(id)] };
}

/** The last `lines` lines of the job's output file. */
export function tailCommand(file: string, lines: number): HostCommand {
  const n = String(Math.max(1, Math.min(100000, Math.floor(lines))));
  return { argv: ['tail', '-n', n, '--', checkPath(file, 'job output file')] };
}

/** The batch script the controller keeps for the job (its text: the server's command line). */
export function scriptTextCommand(id: string): HostCommand {
  return { argv: ['scontrol', 'write', 'batch_script', checkId(id), '-'] };
}

/** The login user's home (where `~/` of the script path is). */
export function homeCommand(): HostCommand {
  return { argv: ['sh', '-c', 'printf "%s\\n" "$HOME"'] };
}

/**
 * Whether the script `$1` (`~/` the login user's home) still says what job `$2` was submitted
 * with: exit 0 the same, 1 different (a requeue would run the old copy), 2 either is unreadable.
 */
export function scriptChangedCommand(script: string, id: string): HostCommand {
  const text = [
    'case "$1" in "~/"*) s="$HOME/${1#??}";; *) s=$1;; esac',
    'scontrol write batch_script "$2" - 2>/dev/null | cmp -s - "$s"',
  ].join('\n');
  return { argv: ['sh', '-c', text, 'sh', checkPath(script, 'batch script path'), checkId(id)] };
}

/** A node name as Slurm prints it (BatchHost): a plain host name. */
const NODE_NAME = /^[A-Za-z0-9][A-Za-z0-9.-]{0,252}$/;

function checkNode(node: string): string {
  if (!NODE_NAME.test(node)) throw new Error(`Invalid Slurm node name: ${JSON.stringify(node)}`);
  return node;
}

/**
 * sh run inside a step of the job (srun sets SLURM_JOB_ID, SLURM_STEP_ID and SLURMD_NODENAME):
 * `roots` becomes the job's processes on this node that are not this step's (`scontrol listpids`
 * asks the node's own slurmd, so a process of another cluster's job with the same id is never
 * taken), the task of each step (LOCALID not `-`; their descendants follow from the tree). None:
 * exit 3 with why on stderr.
 */
export const JOB_ROOTS_SH = [
  'roots=$(scontrol listpids "$SLURM_JOB_ID" "$SLURMD_NODENAME" 2>/dev/null | while read -r p j s l g; do',
  '  case $p in ""|*[!0-9]*) continue;; esac',
  '  [ "$s" = "${SLURM_STEP_ID:-}" ] || [ "$s" = extern ] || [ "$l" = - ] || printf "%s " "$p"',
  'done)',
  'roots=${roots% }',
  'if [ -z "$roots" ]; then echo "no process of job $SLURM_JOB_ID on $SLURMD_NODENAME (scontrol listpids)" >&2; exit 3; fi',
].join('\n');

/**
 * `script` (sh) run as a step of job `id` on its node `node`, beside the server (`--overlap`:
 * it takes none of the job's resources, and does not wait for them), one task, as the login
 * user; srun ends the step when the SSH host's end of the stream closes.
 */
export function inJobCommand(id: string, node: string, script: string): HostCommand {
  return {
    argv: [
      'srun',
      `--jobid=${checkId(id)}`,
      '--overlap',
      `--nodelist=${checkNode(node)}`,
      '--nodes=1',
      '--ntasks=1',
      '--quiet',
      'sh',
      '-c',
      script,
    ],
  };
}
