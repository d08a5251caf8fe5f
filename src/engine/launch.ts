/**
 * How an engine's server command appears in a command line (ExecStart, a container's Path and
 * Args, a pod's command and args). Each engine lists its forms (`Engine.launch`, in its own
 * folder); `locateLaunch` finds the first of them in an argv, also behind wrappers (env,
 * numactl) and with the console script run by its interpreter (`python3 /usr/bin/vllm serve`).
 * Pure; which engines are searched is the caller's (./execStart.ts searches them all).
 */
import type { EngineId } from './engine';

/** One way an engine's server is launched: a module run by Python, its console script, or both. */
export interface LaunchForm {
  /** Its name in a location (`ServerCommandLocation.form`): "launch_server", "vllm serve". */
  readonly form: string;
  /** `python[3] [opts] -m MODULE [SUBCOMMAND]`: the modules that run it. */
  readonly modules: readonly string[];
  /** The console script that runs it (`sglang`, by its basename), followed by `subcommand`. */
  readonly executable?: string;
  /** The word after the module or the console script (`serve`); none when the module is the server. */
  readonly subcommand?: string;
  /** Its first argument, when not a flag, is the model (`vllm serve MODEL`). */
  readonly positionalModel?: boolean;
  /** How a message names it ("python -m sglang.launch_server"); a form without it is not listed. */
  readonly shown?: string;
}

/** What `locateLaunch` searches: an engine's id and its forms. */
export interface LaunchForms {
  readonly id: EngineId;
  readonly launch: readonly LaunchForm[];
}

export interface ServerCommandLocation {
  /** Index of the interpreter or the engine's executable. */
  readonly start: number;
  /** Index of the first server argument (after `-m sglang.launch_server`, `sglang serve`, `vllm serve`, ...). */
  readonly argsStart: number;
  /** The form found (`LaunchForm.form`). */
  readonly form: string;
  readonly engine: EngineId;
}

const PYTHON = /^python[0-9.]*$/;

function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

/** The first server command of any of `engines` in `argv`, by position; null when there is none. */
export function locateLaunch(argv: readonly string[], engines: readonly LaunchForms[]): ServerCommandLocation | null {
  const forms = engines.flatMap((e) => e.launch.map((form) => ({ engine: e.id, form })));
  const found = (start: number, next: number, hit: { engine: EngineId; form: LaunchForm }): ServerCommandLocation => ({
    start,
    argsStart: next + (hit.form.subcommand === undefined ? 0 : 1),
    form: hit.form.form,
    engine: hit.engine,
  });
  for (let i = 0; i < argv.length; i++) {
    const b = basename(argv[i]);
    if (PYTHON.test(b)) {
      for (let j = i + 1; j < argv.length - 1; j++) {
        if (argv[j] === '-m') {
          const mod = argv[j + 1];
          const hit = forms.find(
            ({ form }) =>
              form.modules.includes(mod) && (form.subcommand === undefined || argv[j + 2] === form.subcommand),
          );
          if (hit) return found(i, j + 2, hit);
          break;
        }
        // Another interpreter word is the outer loop's: scanning on from each one would be quadratic.
        if (!argv[j].startsWith('-') || PYTHON.test(basename(argv[j]))) break;
      }
    }
    const hit = forms.find(
      ({ form }) => form.executable === b && (form.subcommand === undefined || argv[i + 1] === form.subcommand),
    );
    if (hit) return found(i, i + 1, hit);
  }
  return null;
}
