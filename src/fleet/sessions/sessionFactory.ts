import type { ServerProfile, Settings } from '../../config/config';
import { ServerSession } from '../../monitor/watch/session';
import type { LogLevel } from '../../monitor/watch/watchTypes';
import { TunnelAgent } from '../../transport/httpAgent';
import { LocalTransport } from '../../transport/local/localTransport';
import { loadSshTarget } from '../../transport/ssh/sshConfig';
import { expandUserPath, systemPathContext } from '../../transport/ssh/sshPaths';
import { SshTransport } from '../../transport/ssh/sshTransport';
import { OpenSshTransport } from '../../transport/openssh/opensshTransport';
import { chooseClient, clientSettingFor } from '../../transport/openssh/chooseClient';
import { gatherClientFacts } from '../../transport/openssh/clientFacts';
import type { LoginAnswer, LoginQuestion } from '../../transport/ssh/loginPolicy';
import type { SshPrompt } from '../../transport/openssh/askpass/promptKind';
import type { UnknownHostKeyInfo } from '../../transport/ssh/sshOptions';
import { TransportError, type Transport } from '../../transport/transport';
import { curlFetchVia } from '../../transport/curlFetch';
import { ChannelLimitedTransport } from '../../transport/channelLimit';
import { ServerHttpClient, type ServerHttpOptions } from '../../engine/serverHttp';
import { hostKeyAcceptedNew, hostKeyRefusedStrict, sshClientLine } from '../../present/words/fleetWords';
import { knownHostsFileInvalid } from '../../present/words/sshWords';

export type UnknownHostKey = UnknownHostKeyInfo;
export type { LoginAnswer, LoginQuestion, SshPrompt };

/** What a connection may have to ask the user (VS Code: fronts/vscode/secrets/prompts.ts; CLI: fronts/cli/prompt.ts). */
export interface SessionUi {
  trustUnknownHostKey(key: UnknownHostKey): Promise<boolean>;
  requestPassphrase(keyPath: string, retry: boolean): Promise<string | undefined>;
  /**
   * A keyboard-interactive question (one-time code, PAM password) or a password login, once per
   * connection and hop; undefined = cancelled; `signal` aborts when the attempt ended meanwhile
   * (close the question). Absent where nobody can answer (scripts, MCP).
   */
  login?(question: LoginQuestion, signal: AbortSignal): Promise<LoginAnswer | undefined>;
  /** Said when a host needs an interactive login and `login` is absent. */
  readonly noLoginHint?: string;
  /**
   * A question of the OpenSSH client (a key's passphrase, a token's PIN, a one-time code, a
   * password); undefined = cancelled. Absent where nobody can answer (MCP, scripts): OpenSSH then
   * runs with BatchMode yes.
   */
  sshPrompt?(prompt: SshPrompt, signal: AbortSignal): Promise<string | undefined>;
}

type Log = (level: LogLevel, message: string) => void;

/**
 * The transport for a server: SSH (host keys checked per kimiService.hostKeyPolicy) or local processes.
 * Known hosts: a host whose ~/.ssh/config entry sets UserKnownHostsFile uses that file (the
 * transport reads it from the resolved target); every other host uses kimiService.knownHostsFile.
 */
export async function createTransport(
  server: ServerProfile,
  settings: Settings,
  ui: SessionUi,
  log: Log,
): Promise<Transport> {
  if (server.host === undefined) return new LocalTransport();
  let knownHostsFile: string;
  try {
    knownHostsFile = expandUserPath(settings.knownHostsFile, systemPathContext());
  } catch (err) {
    throw new TransportError('config', knownHostsFileInvalid((err as Error).message));
  }
  const loaded = loadSshTarget({
    host: server.host,
    port: server.port,
    username: server.username,
    identityFile: server.identityFile,
  });
  loaded.catch(() => undefined); // awaited below when ssh2 connects
  const hostArgs = {
    host: server.host,
    ...(server.port !== undefined ? { port: server.port } : {}),
    ...(server.username !== undefined ? { username: server.username } : {}),
    ...(server.identityFile !== undefined ? { identityFile: server.identityFile } : {}),
  };
  const { setting, where } = clientSettingFor(server, settings.sshClient);
  // ssh2 set by hand: what the host's config asks that ssh2 cannot do still words a refused login.
  const facts = setting !== 'openssh' ? await gatherClientFacts(hostArgs, knownHostsFile, () => loaded) : undefined;
  const choice = chooseClient(setting, facts, process.platform, where);
  log('info', sshClientLine(server.name, choice.client, choice.reason));
  const decideUnknownHostKey = async (key: UnknownHostKeyInfo): Promise<'trust' | 'reject'> => {
    switch (settings.hostKeyPolicy) {
      case 'strict':
        log('error', hostKeyRefusedStrict(key.fingerprint, key.host, key.port));
        return 'reject';
      case 'accept-new':
        log('warn', hostKeyAcceptedNew(key.fingerprint, key.host, key.port));
        return 'trust';
      case 'ask':
        return (await ui.trustUnknownHostKey(key)) ? 'trust' : 'reject';
    }
  };
  if (choice.client === 'openssh') {
    return new OpenSshTransport({
      host: hostArgs,
      knownHostsFile,
      decideUnknownHostKey,
      choice,
      ...(ui.sshPrompt ? { prompt: (p: SshPrompt, signal: AbortSignal) => ui.sshPrompt!(p, signal) } : {}),
      log: (message) => log('info', `[${server.name}] ${message}`),
    });
  }
  const target = await loaded;
  return new SshTransport({
    target,
    knownHostsFile,
    decideUnknownHostKey,
    requestPassphrase: (keyPath, retry) => ui.requestPassphrase(keyPath, retry),
    ...(ui.login
      ? { requestLogin: (question: LoginQuestion, signal: AbortSignal) => ui.login!(question, signal) }
      : {}),
    ...(ui.noLoginHint !== undefined ? { noLoginHint: ui.noLoginHint } : {}),
    choice,
    log: (message) => log('info', `[${server.name}] ${message}`),
  });
}

export async function createSession(
  server: ServerProfile,
  settings: Settings,
  ui: SessionUi,
  log: Log,
  httpOptions?: ServerHttpOptions,
  /** Wraps the transport the session (its HTTP included) uses (the broker's, src/broker/brokeredTransport.ts). */
  wrap?: (transport: Transport) => Transport,
): Promise<ServerSession> {
  const limited = new ChannelLimitedTransport(await createTransport(server, settings, ui, log));
  const transport = wrap ? wrap(limited) : limited;
  const agent = new TunnelAgent(transport.openStream);
  // When the host forbids TCP forwarding, HTTP goes through curl on the host instead.
  const http = new ServerHttpClient(server.url, agent, undefined, {
    fallbackFetch: curlFetchVia(transport),
    onFallback: (message) => log('warn', `[${server.name}] ${message}`),
    ...httpOptions,
  });
  return new ServerSession(server, transport, http, log);
}
