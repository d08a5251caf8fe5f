/**
 * The prompts of one master's login: the askpass session and the environment that points
 * OpenSSH at the helper (SSH_ASKPASS_REQUIRE=force: used with or without a DISPLAY or a
 * terminal). Nothing when no front can answer, or the helper is not there (then BatchMode).
 */
import { AskpassSession } from './askpassServer';
import { runnableHelper } from './helperFile';
import type { SshPrompter } from './promptKind';
import { askpassCannotListen, askpassHelperMissing } from '../../../present/words/connectionWords';

export interface MasterPrompts {
  /** Added to the master's environment. */
  readonly env: Readonly<Record<string, string>>;
  readonly session: AskpassSession;
}

export async function openMasterPrompts(o: {
  readonly ask: SshPrompter | undefined;
  readonly helper: string;
  /** The transport's own 0700 folder, and the socket's path in it. */
  readonly dir: string;
  readonly socketPath: string;
  readonly host: string;
  readonly endLogin: () => void;
  readonly log: (message: string) => void;
}): Promise<MasterPrompts | undefined> {
  if (!o.ask) return undefined;
  const helper = runnableHelper(o.helper, o.dir);
  if (!helper) {
    o.log(askpassHelperMissing(o.host, o.helper));
    return undefined;
  }
  let session: AskpassSession;
  try {
    session = await AskpassSession.start({
      socketPath: o.socketPath,
      host: o.host,
      ask: o.ask,
      endLogin: o.endLogin,
      log: o.log,
    });
  } catch (err) {
    o.log(askpassCannotListen(o.host, (err as Error).message));
    return undefined;
  }
  return {
    session,
    env: {
      SSH_ASKPASS: helper.program,
      SSH_ASKPASS_REQUIRE: 'force',
      KIMI_ASKPASS_RUNTIME: process.execPath,
      KIMI_ASKPASS_SCRIPT: helper.script,
      ...session.env,
    },
  };
}
