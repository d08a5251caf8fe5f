/**
 * What the watch of a load says in the output channel and its alerts: the journal follow, the
 * host sampler, HTTP, the announced address, and the probes of the unit. Pure functions of the
 * facts the witnesses gather, in the display language (the alerts, and the output channel's lines
 * a user reads as the load goes); commands, paths and what the host said stay as they are.
 */
import * as l10n from '@vscode/l10n';

// The journal follow.

export function failureCauseUnread(unit: string, error: string): string {
  return l10n.t('Could not read why {0} failed: {1}', unit, error);
}

export function journalFollowFailed(error: string): string {
  return l10n.t('Could not follow the journal: {0}', error);
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
  const exit = code ?? 'none';
  return stderr.length
    ? l10n.t(
        'journalctl ended (exit {0}): {1}; following again in {2} s.',
        exit,
        stderr.join(' ').slice(0, 300),
        retrySeconds,
      )
    : l10n.t('journalctl ended (exit {0}); following again in {1} s.', exit, retrySeconds);
}

// The announced address.

export function announcedNotFollowed(announced: string, why: string, configured: string): string {
  return l10n.t(
    'The server says it listens on {0}, but {1}: requests stay on the configured url {2}.',
    announced,
    why,
    configured,
  );
}

/** An alert. */
export function announcedFollowed(message: string, url: string): string {
  return l10n.t('{0} Using {1}.', message, url);
}

export function cannotResolveOnHost(name: string, error: string): string {
  return l10n.t('Could not resolve {0} on the host: {1}', name, error);
}

// HTTP.

export function httpWaits(why: string): string {
  return l10n.t('HTTP waits: {0}.', why);
}

export function healthWithoutListener(): string {
  return l10n.t(
    "/health answered while no socket listened on its port in the host's view (another network namespace?): /health is asked every round.",
  );
}

// The host sampler.

/** Which witnesses a watch goes without when the host sampler cannot run where the server runs, and why. */
export function lackingWords(service: string, why: string): string {
  return l10n.t(
    "No host sampler for {0}: {1}. The watch lacks its witnesses (GPU memory, bytes read by the server's processes, the listener on its port); the load is followed from the log and HTTP, and nothing is read from the SSH host in their place.",
    service,
    why,
  );
}

export function samplerCouldNotRun(where: string, code: number | null, stderr: string): string {
  if (code === null)
    return stderr
      ? l10n.t('the host sampler could not run {0} (exit by signal: {1})', where, stderr)
      : l10n.t('the host sampler could not run {0} (exit by signal)', where);
  return stderr
    ? l10n.t('the host sampler could not run {0} (exit {1}: {2})', where, code, stderr)
    : l10n.t('the host sampler could not run {0} (exit {1})', where, code);
}

export function modelPathInNoVolume(path: string, service: string): string {
  return l10n.t('{0} is in no volume of {1}', path, service);
}

/** ExecStart names no model path on the host (`given`: the one it names, if any). */
export function noLocalModelPath(given: string | undefined): string {
  return given
    ? l10n.t('No local --model-path in ExecStart ({0})', given)
    : l10n.t('No local --model-path in ExecStart');
}

export function journalOnlyProgress(why: string): string {
  return l10n.t('{0}: progress comes from the journal only.', why);
}

export function noSafetensors(path: string | undefined): string {
  return l10n.t('No *.safetensors in {0}: progress comes from the journal only.', String(path));
}

export function modelSize(path: string | undefined, files: number, bytes: number): string {
  return l10n.t('Model {0}: {1} safetensors files, {2} GB.', String(path), files, (bytes / 1e9).toFixed(1));
}

export function samplerRunsOn(where: string, pids: readonly number[]): string {
  return l10n.t("The host sampler runs {0}: the server's processes there are PIDs {1}.", where, pids.join(', '));
}

export function nodeSamplerEnded(where: string, code: number | null): string {
  return code === null
    ? l10n.t("The host sampler {0} ended (exit by signal): the job's state is asked.", where)
    : l10n.t("The host sampler {0} ended (exit {1}): the job's state is asked.", where, code);
}

export function samplerEnded(code: number): string {
  return l10n.t('The sampler ended (exit {0}); the unit is asked every round instead.', code);
}

export function samplerStartFailed(error: string): string {
  return l10n.t('Could not start the sampler: {0}', error);
}

// Who holds the server's port.

/** `standIn` is the stand-in in words ("port 30000 is held by pid 77 (python3), not by ..."). */
export function standInNotCounted(standIn: string): string {
  return l10n.t('{0}: its answers are not counted; the load keeps the phase its own witnesses say.', standIn);
}

export function portAnsweredBy(port: number, service: string): string {
  return l10n.t('port {0} is answered by {1} now.', port, service);
}

export function portOwnerUnreadable(port: number, service: string): string {
  return l10n.t(
    "Who listens on port {0} cannot be told: the fds of {1}'s processes (/proc/PID/fd) are not readable by this login (the server runs as another user); answers on the port are taken as the server's.",
    port,
    service,
  );
}

export function portHeldByContainerCli(
  port: number,
  pid: number | undefined,
  command: string | undefined,
  service: string,
): string {
  return l10n.t(
    "port {0} is held by pid {1} ({2}); {3} runs a container CLI, whose server runs outside its process tree: answers on the port are taken as the server's.",
    port,
    pid ?? '?',
    command ?? '?',
    service,
  );
}

export function portHeldByForwarder(port: number, pid: number | undefined, command: string | undefined): string {
  return l10n.t(
    "port {0} is held by pid {1} ({2}), which forwards it into another network namespace: answers on the port are taken as the server's.",
    port,
    String(pid),
    String(command),
  );
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
  if (change === 'new run') return l10n.t('The unit was restarted (not by this watch): following the new load.');
  if (change === 'stopping') return l10n.t('The unit is stopping (not by this watch).');
  if (change === 'stopped') return l10n.t('The unit is stopped (not by this watch).');
  return l10n.t('The unit is {0} (not by this watch).', change);
}

export function unitProbeFailed(starting: boolean, error: string): string {
  return starting
    ? l10n.t('Could not look at the unit: {0}; trying again.', error)
    : l10n.t('Unit probe failed: {0}; trying again.', error);
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
  return l10n.t('{0} got no answer in time: counted as a failed /health.', `${baseUrl}/health`);
}

/** Why a watch ended when the user stopped it. */
export function stoppedByUser(): string {
  return l10n.t('stopped by the user');
}

/** `verdict`: the load's verdict now; `stop`: the front's way to stop the watch (a hint mark). */
export function alreadyWatching(server: string, verdict: string, stop: string): string {
  return l10n.t('Kimi on {0} is already being watched ({1}). {2} first.', server, verdict, stop);
}

export function couldNotReadBeforeRestart(unit: string, why: string): string {
  return l10n.t('could not read {0} before restarting it ({1}); nothing was restarted', unit, why);
}

/** Why the address a server announced is not followed (the end of announcedNotFollowed's line). */
export function noAddressOrName(target: string): string {
  return l10n.t('{0} is no address or name', JSON.stringify(target));
}

export function addressesUnreadable(): string {
  return l10n.t("this host's addresses could not be read (/proc/net)");
}

export function noSuchInterface(address: string): string {
  return l10n.t("this host has no interface with {0} (another machine's address)", address);
}

export function cannotResolve(name: string): string {
  return l10n.t('this host cannot resolve {0}', name);
}

export function resolvesElsewhere(name: string, addresses: readonly string[]): string {
  return l10n.t('{0} resolves to {1} on this host, none of its own addresses', name, addresses.join(', '));
}

/** A node of rank > 0 of a multi-node server finished loading: it serves no HTTP itself. */
export function rankFinishedLoading(): string {
  return l10n.t('this rank finished loading (it serves no HTTP: node rank 0 does)');
}

export function portClosedRefused(): string {
  return l10n.t('port closed (connection refused)');
}

export function noMemoryReadings(): string {
  return l10n.t('nvidia-smi gave no memory readings');
}

/** The 1-token completion probe's result. `why`: why /v1/models did not list a model. */
export function modelsFailed(why: string): string {
  return l10n.t('/v1/models: {0}', why);
}

export function completionRefused(): string {
  return l10n.t('connection refused');
}

/** `text`: the token answered, quoted as JSON. */
export function completionAnswered(text: string): string {
  return l10n.t('1-token completion answered ({0})', text);
}
