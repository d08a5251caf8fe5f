import type { ChildProcess } from 'node:child_process';

/** Ends a process the test started (SIGTERM) and waits until it has exited; one already ended is left alone. */
export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}
