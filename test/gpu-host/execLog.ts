/**
 * Reading the simulated host's exec.log (one line per stand-in invocation, written by
 * lib/common.js logExec) and the sshd log by SSH connection. A host may serve several clients at
 * once (a background watch of the same fleet, the harness's own logins, a second session of a
 * test), so a test that counts what its code ran counts the lines of that code's connection only.
 * A connection is named by its client end, "address:port": what sshd puts in SSH_CONNECTION and
 * in its "Accepted ..." and "Starting session: ..." lines.
 */

export interface ExecEntry {
  /** Host clock, ms. */
  readonly at: number;
  /** The stand-in's pid (in the host's pid namespace). */
  readonly pid: number;
  /** The SSH connection it ran for ("address:port"), or '-' when none (the unit supervisor, nsExec). */
  readonly ssh: string;
  /** The stand-in: systemctl, journalctl, nvidia-smi or sudo. */
  readonly name: string;
  /** Its arguments, shell-quoted, space-separated. */
  readonly args: string;
  readonly line: string;
}

const EXEC_LINE = /^(\S+) (\d+) ssh=(\S+) (\S+) ?(.*)$/;

export function parseExecLine(line: string): ExecEntry {
  const m = EXEC_LINE.exec(line);
  if (!m) throw new Error(`not an exec.log line: ${JSON.stringify(line)}`);
  return { at: Date.parse(m[1]!), pid: Number(m[2]), ssh: m[3]!, name: m[4]!, args: m[5]!, line };
}

/** The client end of an SSH_CONNECTION value ("client-address client-port server-address server-port"). */
export function sshClientOf(sshConnection: string): string {
  const m = /^(\S+) (\d+) \S+ \d+$/.exec(sshConnection.trim());
  if (!m) throw new Error(`not an SSH_CONNECTION value: ${JSON.stringify(sshConnection)}`);
  return `${m[1]}:${m[2]}`;
}

/** The connection an sshd log line is about ("from 127.0.0.1 port 45678"), if it names one. */
export function sshdLineClient(line: string): string | undefined {
  const m = / from (\S+) port (\d+)\b/.exec(line);
  return m ? `${m[1]}:${m[2]}` : undefined;
}

/** The connections sshd accepted a login on in `sshdLog` (e.g. the log since a mark). */
export const acceptedClients = (sshdLog: readonly string[]): string[] =>
  sshdLog.filter((l) => /\bAccepted /.test(l)).flatMap((l) => sshdLineClient(l) ?? []);

/** The sshd log's "Starting session: ..." lines of connection `client`: a channel each (exec, subsystem, shell). */
export const sshdSessions = (sshdLog: readonly string[], client: string): string[] =>
  sshdLog.filter((l) => /Starting session: /.test(l) && sshdLineClient(l) === client);

/**
 * The entries of `entries` that did not run on one of `ours`, each said with the connection that
 * ran it and, from the sshd log, who logged in on that connection: for a failure message.
 */
export function strangers(entries: readonly ExecEntry[], ours: readonly string[], sshdLog: readonly string[]): string {
  const login = (client: string) =>
    sshdLog.find((l) => l.includes('Accepted ') && sshdLineClient(l) === client)?.replace(/^.*?Accepted /, 'Accepted ');
  const others = entries.filter((e) => !ours.includes(e.ssh));
  if (!others.length) return '(none)';
  return others
    .map(
      (e) =>
        `${e.line}\n    pid ${e.pid}, ${e.ssh === '-' ? 'no SSH session' : `connection ${e.ssh}: ${login(e.ssh) ?? '?'}`}`,
    )
    .join('\n');
}
