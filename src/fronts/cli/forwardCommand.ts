/** `forward`: a local port to the server's, through the SSH connection, until SIGINT/SIGTERM. */
import * as l10n from '@vscode/l10n';
import { ForwardError, openedLine } from '../../fleet/forward/forwardPlan';
import { EXIT } from './exitCodes';
import { errorLine } from './format';
import { connect, Interrupted, type Context } from './cliContext';

/** Opens the forward and keeps it until SIGINT/SIGTERM: the normal end of this command (exit 0). */
export async function forward(ctx: Context): Promise<number> {
  const { cmd, io, fleet, server } = ctx;
  if (server.host !== undefined) {
    const refusedCode = await connect(ctx);
    if (refusedCode !== undefined) return refusedCode;
  }
  let info;
  try {
    ({ info } = await ctx.interruptible(
      fleet.forward(server, cmd.localPort !== undefined ? { localPort: cmd.localPort } : {}),
    ));
  } catch (error) {
    if (!(error instanceof ForwardError)) throw error;
    const code = error.kind === 'prohibited' ? EXIT.failed : EXIT.config;
    if (cmd.json) io.stdout(errorLine(error.message, code, true, 'forward'));
    io.stderr(`kimi-service: ${error.message}`);
    return code;
  }
  io.stdout(cmd.json ? JSON.stringify({ event: 'forward', ...info }) : openedLine(info));
  if (!cmd.json) io.stderr(l10n.t('Press Ctrl-C to close the forward.'));
  try {
    await ctx.interruptible(new Promise<never>(() => undefined));
  } catch (error) {
    if (!(error instanceof Interrupted)) throw error;
  }
  await fleet.closeForward(server);
  if (cmd.json) io.stdout(JSON.stringify({ event: 'closed', server: server.name, localPort: info.localPort }));
  else io.stderr(l10n.t('Closed {0}.', `127.0.0.1:${info.localPort}`));
  return EXIT.ok;
}
