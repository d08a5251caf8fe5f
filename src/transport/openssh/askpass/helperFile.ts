/** Where the askpass helper is, and a copy of it that can be run. I/O only. */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The helper beside the bundle that runs this code (dist/askpass.sh beside dist/extension.js, cli.js, mcp.js). */
export function defaultAskpassHelper(): string {
  return path.join(__dirname, 'askpass.sh');
}

export interface RunnableHelper {
  /** SSH_ASKPASS. */
  readonly program: string;
  /** askpass.js, which the program runs (KIMI_ASKPASS_SCRIPT). */
  readonly script: string;
}

/**
 * The helper as a program ssh can run, or undefined when it or its askpass.js is missing. A
 * helper that lost its executable bit (an archive that kept no modes) is copied into the
 * transport's own folder, 0700.
 */
export function runnableHelper(helper: string, ownDir: string): RunnableHelper | undefined {
  const script = path.join(path.dirname(helper), 'askpass.js');
  if (!fs.existsSync(helper) || !fs.existsSync(script)) return undefined;
  try {
    fs.accessSync(helper, fs.constants.X_OK);
    return { program: helper, script };
  } catch {
    const copy = path.join(ownDir, 'askpass.sh');
    fs.copyFileSync(helper, copy);
    fs.chmodSync(copy, 0o700);
    return { program: copy, script };
  }
}
