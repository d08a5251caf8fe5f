/**
 * A systemd unit as a Target: `systemctl restart --no-block`, `systemctl show`, the journal.
 * What the unit wraps (`docker run --name X` in its ExecStart: target.ts gives a DockerRunUnit)
 * gives its state and PID, and a detached container's log.
 */
import type { RemoteProcess } from '../../transport/transport';
import { isSudoRefusalText, privilegedCommand } from '../../transport/shell';
import {
  TargetError,
  type LogFollowHandlers,
  type LogTail,
  type RestartResult,
  type Target,
  type TargetExec,
  type TargetIo,
  type TargetPrivileges,
  type TargetState,
  type WrappedService,
} from '../targetTypes';
import { journalFollowCommand, journalProblem, journalTailCommand, parseJournalJsonLine } from '../journalctl';
import { DropInEditor } from './dropInEditor';
import { privilegedArgv, sudoersInstallCommand, sudoersRules, sudoRefusalMessage } from './sudoers';
import {
  parseEnvironment,
  parseExecStartProperty,
  parseShow,
  showCommand,
  toServiceStatus,
  UNIT_PROPERTIES,
} from './systemd';
import { hintMark } from '../../util/hintMark';
import { notAllowedToRestart, unitRestartFailed } from '../../present/words/targetWords';

export class SystemdTarget implements Target {
  readonly kind = 'systemd';
  readonly argsEdit: DropInEditor;
  readonly commandRunsOnHost = true;
  readonly privileges: TargetPrivileges;
  constructor(
    readonly label: string,
    private readonly sudo: boolean,
    private readonly host: string | undefined,
    private readonly wrapped: WrappedService,
  ) {
    this.argsEdit = new DropInEditor(label);
    this.privileges = {
      kind: 'sudoers',
      rules: (user) => sudoersRules(user, label),
      // Read when asked: a unit name sudoers cannot take throws then, not when the target is made.
      get installCommand() {
        return sudoersInstallCommand(label);
      },
    };
  }

  async restart(io: TargetExec): Promise<RestartResult> {
    const result = await io.exec({ argv: privilegedArgv.restart(this.label), sudo: this.sudo });
    if (result.code === 0) return { ok: true };
    return { ok: false, error: restartError(result.stderr, this.label, this.sudo, this.host) };
  }

  async readState(io: TargetExec): Promise<TargetState> {
    const result = await io.exec(showCommand(this.label, [...UNIT_PROPERTIES, 'ExecStart']));
    if (result.code !== 0)
      throw new TargetError('failed', `systemctl show failed: ${result.stderr.trim() || `exit ${result.code}`}`);
    const properties = parseShow(result.stdout);
    const argv = parseExecStartProperty(properties['ExecStart'] ?? '');
    return this.wrapped.readState((command) => io.exec(command), toServiceStatus(properties), argv);
  }

  async runningArgv(io: TargetExec): Promise<readonly string[] | undefined> {
    const show = await io.exec(showCommand(this.label, ['MainPID']));
    const pid = Number(parseShow(show.stdout)['MainPID']);
    if (show.code !== 0 || !Number.isInteger(pid) || pid <= 0) return undefined;
    // /proc/PID/cmdline: the words, each ended by a NUL.
    const cmdline = await io.exec({ argv: ['cat', '--', `/proc/${pid}/cmdline`] });
    if (cmdline.code !== 0) return undefined;
    return cmdline.stdout.split('\0').filter((a, i, all) => a !== '' || i < all.length - 1);
  }

  async readEnvironment(io: TargetExec): Promise<Record<string, string> | undefined> {
    const show = await io.exec(showCommand(this.label, ['Environment']));
    return show.code === 0 ? parseEnvironment(parseShow(show.stdout)['Environment'] ?? '') : undefined;
  }

  get logFollowEndsWithService(): boolean {
    return this.wrapped.ownLog !== undefined;
  }

  followLog(io: TargetIo, sinceEpochMs: number, handlers: LogFollowHandlers): Promise<RemoteProcess> {
    const own = this.wrapped.ownLog;
    if (own) return own.follow(io, sinceEpochMs, handlers);
    return io.stream(
      journalFollowCommand(this.label, sinceEpochMs),
      (line) => {
        const entry = parseJournalJsonLine(line);
        if (entry) handlers.onEntry(entry);
      },
      handlers.onStderr,
    );
  }

  async tailLog(io: TargetExec, lines: number): Promise<LogTail> {
    const own = this.wrapped.ownLog;
    if (own) return own.tail(io, lines);
    const result = await io.exec(journalTailCommand(this.label, lines));
    const entries = result.stdout
      .split('\n')
      .map(parseJournalJsonLine)
      .filter((e) => e !== undefined);
    const problem = journalProblem(result.stderr.split('\n').filter(Boolean), result.code);
    return { entries, ...(problem ? { problem } : {}) };
  }
}

/** The user's words for a failed `systemctl restart`: sudo's refusal, polkit's, or systemctl's own. */
export function restartError(stderr: string, unit: string, sudo: boolean, host: string | undefined): TargetError {
  const text = stderr.trim();
  const command = privilegedCommand(privilegedArgv.restart(unit), sudo);
  if (isSudoRefusalText(text)) {
    // Names the refused command and the rules that allow exactly it.
    return new TargetError(
      'sudo-refused',
      sudoRefusalMessage({ host, unit, action: `systemctl restart ${unit}`, command, stderr: text }),
    );
  }
  if (/access denied|interactive authentication required|permission denied/i.test(text)) {
    return new TargetError(
      'access-denied',
      notAllowedToRestart(unit, text.split('\n')[0] ?? '', command, hintMark('install-sudoers-rules')),
    );
  }
  return new TargetError('failed', unitRestartFailed(unit, text.split('\n').slice(-3).join(' ') || undefined));
}
