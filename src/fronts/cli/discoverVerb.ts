/** `discover HOST` as a process: settings for the host-key policy, signals, the exit code. */
import * as l10n from '@vscode/l10n';
import {
  defaultConfigFile,
  loadStandaloneSettings,
  NO_QUESTIONS_UI,
  nonInteractivePolicy,
} from '../../fleet/servers/standalone';
import { errorText } from '../../util/errors';
import type { CliCommand } from './args';
import { EXIT, exitForSignal } from './exitCodes';
import { errorLine } from './format';
import { terminalUi } from './prompt';
import { discoverCommand } from './discoverCommand';
import { Interrupted, type CliIo, type StopSignal } from './cliContext';

/** `discover HOST`: no server needs to be configured; the settings, when there are any, give the host-key policy. */
export async function discover(cmd: CliCommand, io: CliIo): Promise<number> {
  const sources = { env: io.env, platform: io.platform, home: io.home };
  const loaded = loadStandaloneSettings({
    ...sources,
    ...(cmd.configFile !== undefined ? { configFile: cmd.configFile } : {}),
  });
  const base = loaded.ok ? loaded.settings : undefined;
  const abort = new AbortController();
  const interrupted = new Promise<never>((_, reject) => {
    abort.signal.addEventListener('abort', () => reject(new Interrupted('SIGINT')), { once: true });
  });
  interrupted.catch(() => undefined);
  let stoppedBy: StopSignal = 'SIGINT';
  const removeSignalHandler = io.onSignal((signal) => {
    stoppedBy = signal;
    abort.abort();
  });
  try {
    return await discoverCommand({
      cmd,
      serversFile: cmd.configFile ?? defaultConfigFile(sources),
      knownHostsFile: base?.knownHostsFile ?? '~/.ssh/known_hosts',
      hostKeyPolicy: nonInteractivePolicy(base?.hostKeyPolicy ?? 'ask', io.terminal !== undefined),
      ui: io.terminal ? terminalUi(io.terminal) : NO_QUESTIONS_UI,
      stdout: (line) => io.stdout(line),
      stderr: (line) => io.stderr(line),
      interruptible: (work) => Promise.race([work, interrupted]),
    });
  } catch (error) {
    if (error instanceof Interrupted) {
      io.stderr(`kimi-service: ${l10n.t('interrupted by {0}; nothing was written.', stoppedBy)}`);
      return exitForSignal(stoppedBy);
    }
    if (cmd.json) io.stdout(errorLine(errorText(error), EXIT.failed, true, 'error'));
    io.stderr(`kimi-service: ${errorText(error)}`);
    return EXIT.failed;
  } finally {
    removeSignalHandler();
  }
}
