/**
 * What the watch of a load says in the output channel and its alerts: the journal follow, the
 * host sampler, HTTP, the announced address, and the probes of the unit. Pure functions of the
 * facts the witnesses gather. An alert (a notification, the end of a watch) is in the display
 * language; a line only the output channel shows stays English, as VS Code's own logs are: it is
 * pasted into bug reports and searched for on the web.
 */
import * as l10n from '@vscode/l10n';

// The journal follow.

export function failureCauseUnread(unit: string, error: string): string {
  return `Could not read why ${unit} failed: ${error}`;
}

export function journalFollowFailed(error: string): string {
  return `Could not follow the journal: ${error}`;
}

/** An alert. */
export function journalUnfollowable(unit: string, detail: string): string {
  return l10n.t('The journal of {0} cannot be followed: {1}. Watching from systemd and HTTP alone.', unit, detail);
}

/** journalctl ended; `stderr` is its last lines, `retrySeconds` when it is followed again. */
export function journalctlEnded(
  code: number | null | undefined,
  stderr: readonly string[],
  retrySeconds: number,
): string {
  const said = stderr.length ? `: ${stderr.join(' ').slice(0, 300)}` : '';
  return `journalctl ended (exit ${code ?? 'none'})${said}; following again in ${retrySeconds} s.`;
}

// The announced address.

export function announcedNotFollowed(announced: string, why: string, configured: string): string {
  return `The server says it listens on ${announced}, but ${why}: requests stay on the configured url ${configured}.`;
}

/** An alert. */
export function announcedFollowed(message: string, url: string): string {
  return l10n.t('{0} Using {1}.', message, url);
}

export function cannotResolveOnHost(name: string, error: string): string {
  return `Could not resolve ${name} on the host: ${error}`;
}

// HTTP.

export function httpWaits(why: string): string {
  return `HTTP waits: ${why}.`;
}

export const HEALTH_WITHOUT_LISTENER =
  "/health answered while no socket listened on its port in the host's view (another network namespace?): /health is asked every round.";

// The host sampler.

/** Which witnesses a watch goes without when the host sampler cannot run where the server runs, and why. */
export function lackingWords(service: string, why: string): string {
  return `No host sampler for ${service}: ${why}. The watch lacks its witnesses (GPU memory, bytes read by the server's processes, the listener on its port); the load is followed from the log and HTTP, and nothing is read from the SSH host in their place.`;
}

export function samplerCouldNotRun(where: string, code: number | null, stderr: string): string {
  return `the host sampler could not run ${where} (exit ${code ?? 'by signal'}${stderr ? `: ${stderr}` : ''})`;
}

export function modelPathInNoVolume(path: string, service: string): string {
  return `${path} is in no volume of ${service}`;
}

/** ExecStart names no model path on the host (`given`: the one it names, if any). */
export function noLocalModelPath(given: string | undefined): string {
  return `No local --model-path in ExecStart${given ? ` (${given})` : ''}`;
}

export function journalOnlyProgress(why: string): string {
  return `${why}: progress comes from the journal only.`;
}

export function noSafetensors(path: string | undefined): string {
  return `No *.safetensors in ${path}: progress comes from the journal only.`;
}

export function modelSize(path: string | undefined, files: number, bytes: number): string {
  return `Model ${path}: ${files} safetensors files, ${(bytes / 1e9).toFixed(1)} GB.`;
}

export function samplerRunsOn(where: string, pids: readonly number[]): string {
  return `The host sampler runs ${where}: the server's processes there are PIDs ${pids.join(', ')}.`;
}

export function nodeSamplerEnded(where: string, code: number | null): string {
  return `The host sampler ${where} ended (exit ${code ?? 'by signal'}): the job's state is asked.`;
}

export function samplerEnded(code: number): string {
  return `The sampler ended (exit ${code}); the unit is asked every round instead.`;
}

export function samplerStartFailed(error: string): string {
  return `Could not start the sampler: ${error}`;
}

// Who holds the server's port.

/** `standIn` is the stand-in in words ("port 30000 is held by pid 77 (python3), not by ..."). */
export function standInNotCounted(standIn: string): string {
  return `${standIn}: its answers are not counted; the load keeps the phase its own witnesses say.`;
}

export function portAnsweredBy(port: number, service: string): string {
  return `port ${port} is answered by ${service} now.`;
}

export function portOwnerUnreadable(port: number, service: string): string {
  return `Who listens on port ${port} cannot be told: the fds of ${service}'s processes (/proc/PID/fd) are not readable by this login (the server runs as another user); answers on the port are taken as the server's.`;
}

export function portHeldByContainerCli(
  port: number,
  pid: number | undefined,
  command: string | undefined,
  service: string,
): string {
  return `port ${port} is held by pid ${pid ?? '?'} (${command ?? '?'}); ${service} runs a container CLI, whose server runs outside its process tree: answers on the port are taken as the server's.`;
}

export function portHeldByForwarder(port: number, pid: number | undefined, command: string | undefined): string {
  return `port ${port} is held by pid ${pid} (${command}), which forwards it into another network namespace: answers on the port are taken as the server's.`;
}

// The unit and its alerts.

/** An alert. */
export function completionFails(unit: string, detail: string): string {
  return l10n.t('{0} says it is up, but a 1-token completion fails: {1}', unit, detail);
}

/** An alert. */
export function unhealthy(unit: string, failures: number, last: string): string {
  return l10n.t(
    '{0} is unhealthy: /health failed {1} times in a row while the process runs ({2}).',
    unit,
    failures,
    last,
  );
}

/** An alert. */
export function healthyAgain(unit: string): string {
  return l10n.t('{0} is healthy again.', unit);
}

/** The unit changed under the watch: a new run, or `change` ("stopped", "failed"). */
export function changedOutside(change: string): string {
  return change === 'new run'
    ? 'The unit was restarted (not by this watch): following the new load.'
    : `The unit is ${change} (not by this watch).`;
}

export function unitProbeFailed(starting: boolean, error: string): string {
  return `${starting ? 'Could not look at the unit' : 'Unit probe failed'}: ${error}; trying again.`;
}

/** The end of a watch, shown as its cause. */
export function unreachableFor(seconds: number): string {
  return l10n.t('the host could not be reached for {0} s', seconds);
}

/** The end of a watch, shown as its cause. */
export function notReadyAfter(minutes: number): string {
  return l10n.t('not ready after {0} min', minutes);
}

/** A /health that got no answer within its timeout (said once until one answers again). */
export function healthTimedOut(baseUrl: string): string {
  return `${baseUrl}/health got no answer in time: counted as a failed /health.`;
}
