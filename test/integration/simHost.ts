/**
 * Builds the extension's own session (SSH transport + HTTP through the tunnel + watcher) for a
 * simulated GPU host, exactly as the extension does, without VS Code.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseSettings } from '../../src/config/parseSettings';
import type { HostKeyPolicy, Settings } from '../../src/config/config';
import type { MementoLike } from '../../src/monitor/history/history';
import type { ServerSession } from '../../src/monitor/watch/session';
import type { ServerHttpOptions } from '../../src/engine/serverHttp';
import type { WatchOptions } from '../../src/monitor/watch/watchTypes';
import type { Transport } from '../../src/transport/transport';
import { createSession, type SessionUi, type UnknownHostKey } from '../../src/fleet/sessions/sessionFactory';
import { Fleet } from '../../src/fleet/fleet';
import type { FleetDeps } from '../../src/fleet/fleetTypes';
import { NO_QUESTIONS_UI } from '../../src/fleet/servers/standalone';
import type { GpuHost } from '../gpu-host/harness';
import { serverEntry } from '../gpu-host/serverEntry';
import { enableParsers, type ParserChangeDeps } from '../../src/target/systemd/parserDropIn';
import { shellLine } from '../../src/transport/shell';
export { serverEntry };
import { acceptedClients, sshClientOf, type ExecEntry } from '../gpu-host/execLog';

export interface TestSession {
  readonly session: ServerSession;
  readonly settings: Settings;
  readonly knownHostsFile: string;
  readonly asked: UnknownHostKey[];
  /** Every log line of the session, with its level (and a timestamp). */
  readonly logLines: string[];
  /** A temporary folder of the test's own, removed by dispose(). */
  readonly dir: string;
  dispose(): void;
}

export interface TestSessionOptions {
  policy?: HostKeyPolicy;
  knownHosts?: string;
  /** The answer to the unknown-host-key question (policy "ask"). */
  trust?: boolean;
  /** Raw fields of the server entry that replace the host's defaults. */
  server?: Record<string, unknown>;
  /** Raw top-level settings that replace the defaults (knownHostsFile, ...). */
  settings?: Record<string, unknown>;
  /** The answer to the passphrase question. */
  passphrase?: string;
  /** Answers keyboard-interactive and password questions (absent: nobody can, as in a script). */
  login?: SessionUi['login'];
  http?: ServerHttpOptions;
  name?: string;
  /** Wraps the session's transport (to watch what it is asked). */
  wrap?: (transport: Transport) => Transport;
}

/**
 * `server` overrides of `sessionForHost` that log in as `user` (root, or one of the host's
 * `users`) with privileged commands under `sudo -n` or not.
 */
export function loginAs(host: GpuHost, user: string, sudo: boolean): Record<string, unknown> {
  const login = host.login(user);
  return { username: login.username, identityFile: login.identityFile, sudo };
}

export const FAST_WATCH: WatchOptions = {
  pollIntervalMs: 500,
  stallMs: 60_000,
  loadTimeoutMs: 120_000,
  unreachableTimeoutMs: 60_000,
};

export async function sessionForHost(host: GpuHost, opts: TestSessionOptions = {}): Promise<TestSession> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-test-'));
  const knownHostsFile = path.join(dir, 'known_hosts');
  fs.writeFileSync(knownHostsFile, opts.knownHosts ?? `${host.knownHostsLine()}\n`);
  const result = parseSettings({
    servers: [{ ...serverEntry(host, opts.name), ...opts.server }],
    knownHostsFile,
    hostKeyPolicy: opts.policy ?? 'strict',
    ...opts.settings,
  });
  if (!result.ok) throw new Error(result.errors.join('\n'));
  const asked: UnknownHostKey[] = [];
  const logLines: string[] = [];
  const ui: SessionUi = {
    trustUnknownHostKey: async (key) => {
      asked.push(key);
      return opts.trust ?? false;
    },
    requestPassphrase: async () => opts.passphrase,
    ...(opts.login ? { login: opts.login } : {}),
  };
  const session = await createSession(
    result.settings.servers[0],
    result.settings,
    ui,
    (level, message) => logLines.push(`${new Date().toISOString()} ${level}: ${message}`),
    opts.http,
    opts.wrap,
  );
  return {
    session,
    settings: result.settings,
    knownHostsFile,
    asked,
    logLines,
    dir,
    dispose: () => {
      session.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** globalState's stand-in for the load history in headless runs. */
export class MemoryMemento implements MementoLike {
  private readonly map = new Map<string, unknown>();
  get<T>(key: string): T | undefined {
    return this.map.get(key) as T | undefined;
  }
  async update(key: string, value: unknown): Promise<void> {
    this.map.set(key, value);
  }
}

/**
 * A fleet as the CLI and the MCP server make one: no questions asked (an unknown host key is
 * refused), the history in memory, `settings` configured.
 */
export function headlessFleet(settings: Settings, log: FleetDeps['log'] = () => undefined): Fleet {
  const fleet = new Fleet({
    ui: NO_QUESTIONS_UI,
    log,
    history: new MemoryMemento(),
    createSession: (server, all) => createSession(server, all, NO_QUESTIONS_UI, log),
  });
  fleet.configure(settings);
  return fleet;
}

/** The CLI's environment with a home of its own: no servers.json, VS Code settings or history of the machine's user. */
export function cliEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, 'config'),
    XDG_STATE_HOME: path.join(home, 'state'),
    LANG: 'C.UTF-8',
  };
}

/** A servers file for the simulated host (strict host keys, fast polls); returns its path. */
export function writeServersFile(file: string, host: GpuHost, knownHostsFile: string): string {
  fs.writeFileSync(
    file,
    JSON.stringify({
      servers: [serverEntry(host)],
      knownHostsFile,
      hostKeyPolicy: 'strict',
      pollIntervalSeconds: 0.5,
    }),
  );
  return file;
}

/**
 * The SSH connection `transport` runs its commands on, as the host's exec.log and sshd log name it
 * ("address:port"): to count what that connection ran, whatever else talks to the host meanwhile.
 */
export async function connectionOf(transport: Pick<Transport, 'exec'>): Promise<string> {
  const r = await transport.exec('printf %s "$SSH_CONNECTION"');
  if (r.code !== 0) throw new Error(`no SSH_CONNECTION (${r.code}): ${r.stderr}`);
  return sshClientOf(r.stdout);
}

/**
 * A mark on `host`'s exec.log and sshd log, for code that must not get to run anything there (a
 * refused host key, a bad setting). `newRuns()`: the stand-ins run since on connections logged in
 * since; what was connected before (an earlier session still winding down) is left out.
 */
export async function markHost(host: GpuHost): Promise<{ newRuns(): Promise<ExecEntry[]> }> {
  const execs = (await host.execEntries()).length;
  const sshd = host.sshdLog().length;
  return {
    async newRuns() {
      const clients = new Set(acceptedClients(host.sshdLog().slice(sshd)));
      return (await host.execEntries()).slice(execs).filter((e) => clients.has(e.ssh));
    },
  };
}

/**
 * What a change of the server's flags needs, through the session's own SSH connection (sudo as its
 * profile says): its log lines and each diff shown (`DIFF\n...`) go to `lines`, and the diff is
 * answered with `answer`.
 */
export function changeDeps(test: TestSession, lines: string[] = [], answer = true): ParserChangeDeps {
  return {
    sudo: test.session.profile.sudo,
    log: (line) => lines.push(line),
    exec: (command, options) => test.session.transport.exec(shellLine(command), { timeoutMs: 30_000, ...options }),
    confirmDiff: async (diff) => {
      lines.push(`DIFF\n${diff}`);
      return answer;
    },
  };
}

/** Writes the kimi_k2 reasoning and tool-call parsers into the unit's drop-in (the diff accepted
 * unseen) and restarts the unit, watched to ready. */
export async function enableKimiParsersAndRestart(host: GpuHost, test: TestSession): Promise<void> {
  const change = await enableParsers(changeDeps(test), host.unitName, {
    reasoningParser: 'kimi_k2',
    toolCallParser: 'kimi_k2',
  });
  assert.equal(change.kind, 'changed');
  const outcome = await test.session.watch('restart', FAST_WATCH);
  assert.equal(outcome.end, 'ready', outcome.message);
}
