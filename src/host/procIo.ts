/**
 * Bytes read by the server's processes (reference §3: weights are read through mmap in the
 * per-rank scheduler subprocesses, children of MainPID, so the whole tree is summed: the
 * sampler reads them, see monitor/watch/sampler.ts) and the size of the model's weights.
 */
import { assertAbsolutePath, quote } from '../transport/shell';

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
