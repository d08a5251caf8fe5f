/**
 * Entry of `kimi-service` (dist/cli.js, package.json "bin"). The only file that touches
 * `process`: it hands argv, the environment, stdout/stderr, the terminal and the signals to
 * runCli, then exits with its code once the fleet is disposed. `kimi-service mcp` runs the MCP
 * server instead (dist/mcp.js beside this bundle), so agents need one stable command.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { version } from '../../../package.json';
import { runCli } from './run';
import { MCP_VERB } from './args';
import type { StopSignal } from './cliContext';
import * as l10n from '@vscode/l10n';
import { l10nDirs, useEnvLocale } from '../../util/l10n';

/** A handle left open by mistake must not keep an agent's shell call waiting: exit anyway after this. */
const EXIT_GRACE_MS = 2_000;

function write(stream: NodeJS.WriteStream, line: string): void {
  try {
    stream.write(`${line}\n`);
  } catch {
    // The reader went away (EPIPE): nothing left to tell it.
  }
}

async function main(): Promise<void> {
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  const stdin = process.stdin;
  useEnvLocale(process.env, l10nDirs(__dirname));
  const code = await runCli(process.argv.slice(2), {
    env: process.env,
    home: os.homedir(),
    platform: process.platform,
    version,
    stdout: (line) => write(process.stdout, line),
    stderr: (line) => write(process.stderr, line),
    terminal: stdin.isTTY
      ? { input: stdin, output: process.stderr, interrupt: () => process.kill(process.pid, 'SIGINT') }
      : undefined,
    onSignal: (handler) => {
      const on = (signal: StopSignal) => () => handler(signal);
      const onInt = on('SIGINT');
      const onTerm = on('SIGTERM');
      process.on('SIGINT', onInt);
      process.on('SIGTERM', onTerm);
      return () => {
        process.off('SIGINT', onInt);
        process.off('SIGTERM', onTerm);
      };
    },
  });
  process.exitCode = code;
  if (stdin.isTTY) stdin.pause();
  setTimeout(() => exitLeavingHandles(code), EXIT_GRACE_MS).unref();
}

/** The grace is over: say what was left open (a defect worth reporting), then exit. */
function exitLeavingHandles(code: number): void {
  const open = process.getActiveResourcesInfo().filter((kind) => kind !== 'TTYWrap');
  write(process.stderr, l10n.t('kimi-service: exiting with handles still open ({0})', open.join(', ')));
  process.exit(code);
}

/** `kimi-service mcp [args]`: the MCP server's bundle, loaded in this process with its own argv. */
function startMcpServer(): void {
  const script = path.join(__dirname, 'mcp.js');
  process.argv = [process.argv[0]!, script, ...process.argv.slice(3)];
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a sibling bundle, loaded at run time
  require(script);
}

if (process.argv[2] === MCP_VERB) startMcpServer();
else
  main().catch((error: unknown) => {
    write(process.stderr, `kimi-service: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  });
