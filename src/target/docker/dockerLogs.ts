/** A container's log as a target's: `docker logs --timestamps`, followed or tailed. */
import type { RemoteProcess } from '../../transport/transport';
import { journalProblem } from '../journalctl';
import type { LogFollowHandlers, LogTail, TargetExec, TargetIo } from '../targetTypes';
import { logLineEntry } from './dockerInspect';
import { logsFollowCommand, logsTailCommand, type DockerTargetConfig } from './dockerTarget';

export function followContainerLog(
  io: TargetIo,
  config: DockerTargetConfig,
  sudo: boolean,
  sinceEpochMs: number,
  handlers: LogFollowHandlers,
): Promise<RemoteProcess> {
  return io.stream(
    logsFollowCommand(config, sudo, sinceEpochMs),
    (line) => {
      const entry = logLineEntry(line);
      if (entry) handlers.onEntry(entry);
    },
    handlers.onStderr,
  );
}

export async function tailContainerLog(
  io: TargetExec,
  config: DockerTargetConfig,
  sudo: boolean,
  lines: number,
): Promise<LogTail> {
  const result = await io.exec(logsTailCommand(config, sudo, lines));
  const entries = result.stdout
    .split('\n')
    .map(logLineEntry)
    .filter((e) => e !== undefined);
  const problem = journalProblem(result.stderr.split('\n').filter(Boolean), result.code);
  return { entries, ...(problem ? { problem } : {}) };
}
