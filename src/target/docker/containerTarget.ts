/** A plain container (`docker restart NAME`) or a compose service (`docker compose restart SERVICE`) as a Target. */
import type { RemoteProcess } from '../../transport/transport';
import { isSudoRefusalText } from '../../transport/shell';
import { containerNeedsNoRule } from '../../present/words/dockerWords';
import {
  TargetError,
  type LogFollowHandlers,
  type TargetErrorKind,
  type LogTail,
  type RestartResult,
  type Target,
  type TargetExec,
  type TargetIo,
  type TargetPrivileges,
  type TargetState,
} from '../targetTypes';
import type { ArgsEditor } from '../argsEdit';
import { ByHandEditor, ComposeEditor } from './composeEditor';
import { containerState, ContainerReader, dockerAccessHint } from './containerReader';
import { followContainerLog, tailContainerLog } from './dockerLogs';
import { restartCommand, type DockerTargetConfig } from './dockerTarget';

export class ContainerTarget implements Target {
  readonly kind: 'container' | 'compose';
  readonly logFollowEndsWithService = true;
  readonly label: string;
  readonly argsEdit: ArgsEditor;
  readonly commandRunsOnHost = false;
  readonly privileges: TargetPrivileges;
  private readonly reader: ContainerReader;

  constructor(
    private readonly config: DockerTargetConfig,
    private readonly sudo: boolean,
    private readonly host: string | undefined,
  ) {
    this.kind = config.kind;
    this.label = config.label;
    // A container's command line is fixed at `docker run`: only a compose file can be edited.
    this.argsEdit =
      config.kind === 'compose'
        ? new ComposeEditor(config)
        : new ByHandEditor(config.name, async (deps) => (await this.readState({ exec: (c) => deps.exec(c) })).argv);
    this.reader = new ContainerReader(sudo);
    // Docker has no right narrower than "use the daemon", which is root on that host.
    this.privileges = {
      kind: 'none',
      why: containerNeedsNoRule(config.label),
    };
  }

  /** Fixed when the container was created: what `docker inspect` says is what runs. */
  async runningArgv(io: TargetExec): Promise<readonly string[]> {
    return (await this.readState(io)).argv;
  }

  /** Not read: a container's Env may hold secrets (docker inspect leaves it out). */
  async readEnvironment(): Promise<undefined> {
    return undefined;
  }

  async restart(io: TargetExec): Promise<RestartResult> {
    const result = await io.exec(restartCommand(this.config, this.sudo));
    return result.code === 0 ? { ok: true } : { ok: false, error: this.restartError(result.stderr) };
  }

  private restartError(stderr: string): TargetError {
    const text = stderr.trim();
    const hint = dockerAccessHint(text, this.sudo, this.host);
    const what =
      this.config.kind === 'container'
        ? `docker restart ${this.config.name}`
        : `docker compose restart ${this.config.service}`;
    return new TargetError(
      this.errorKind(text, hint),
      `${what} failed: ${hint ?? (text.split('\n').slice(-3).join(' ') || 'no message')}`,
    );
  }

  /** sudo's own refusal is 'sudo-refused', as for a unit; Docker's socket refusing the login is 'access-denied'. */
  private errorKind(text: string, hint: string | undefined): TargetErrorKind {
    if (this.sudo && isSudoRefusalText(text)) return 'sudo-refused';
    return hint ? 'access-denied' : 'failed';
  }

  async readState(io: TargetExec): Promise<TargetState> {
    const inspect = await this.reader.read((command) => io.exec(command), this.config);
    if (inspect.kind === 'error') {
      const hint = dockerAccessHint(inspect.message, this.sudo, this.host);
      throw new TargetError(this.errorKind(inspect.message, hint), `docker inspect failed: ${hint ?? inspect.message}`);
    }
    return containerState(inspect, this.label);
  }

  followLog(io: TargetIo, sinceEpochMs: number, handlers: LogFollowHandlers): Promise<RemoteProcess> {
    return followContainerLog(io, this.config, this.sudo, sinceEpochMs, handlers);
  }

  tailLog(io: TargetExec, lines: number): Promise<LogTail> {
    return tailContainerLog(io, this.config, this.sudo, lines);
  }
}
