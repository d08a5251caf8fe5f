/**
 * `node dist/mcp.js [--config FILE] [--settings FILE]`: the Kimi Service MCP server on stdio.
 * One fleet (one verified SSH connection per server) for the life of the process, disposed when
 * the client closes stdin or sends SIGTERM. stdout carries the protocol only; the log goes to
 * stderr (secrets masked).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { version } from '../../../package.json';
import type { LogLevel } from '../../monitor/watch/watchTypes';
import { errorText } from '../../util/errors';
import { maskSecrets } from '../../util/secrets';
import { mcpUsage, parseMcpArgs } from './args';
import { McpFront } from './front';
import { registerKimiTools } from './tools';
import { MCP_INSTRUCTIONS } from '../../agent/definition';
import { forFront } from '../../present/hints';
import { l10nDirs, useEnvLocale } from '../../util/l10n';

/** Exit code for a bad command line, as the CLI's "bad configuration". */
const EXIT_BAD_CONFIG = 5;

async function main(): Promise<void> {
  useEnvLocale(process.env, l10nDirs(__dirname));
  const parsed = parseMcpArgs(process.argv.slice(2));
  if (!parsed.ok) {
    process.stderr.write(`kimi-service mcp: ${parsed.error}\n\n${mcpUsage()}`);
    process.exit(EXIT_BAD_CONFIG);
  }
  const { args } = parsed;
  if (args.help) {
    process.stdout.write(mcpUsage());
    return;
  }
  if (args.version) {
    process.stdout.write(`${version}\n`);
    return;
  }

  const debug = /^(1|true|debug|trace)$/i.test(process.env.KIMI_MCP_DEBUG ?? '');
  const log = (level: LogLevel, message: string) => {
    if (level === 'trace' && !debug) return;
    process.stderr.write(`${new Date().toISOString()} ${level} ${forFront(maskSecrets(message), 'mcp')}\n`);
  };
  process.on('unhandledRejection', (reason) => log('error', `unhandled rejection: ${errorText(reason)}`));

  const front = new McpFront({ args, env: process.env, log });
  front.read(); // a bad configuration is logged now, and told by every tool call
  const mcp = new McpServer(
    { name: 'kimi-service', title: 'Kimi Service', version },
    { instructions: MCP_INSTRUCTIONS },
  );
  registerKimiTools(mcp, { fleet: front.fleet, settings: front, log });

  let closing = false;
  const shutdown = (why: string) => {
    if (closing) return;
    closing = true;
    log('info', `Shutting down (${why}): closing the SSH connections`);
    front.dispose();
    // The fleet's sockets are closed; exit even if something still holds the event loop.
    setTimeout(() => process.exit(0), 1500).unref();
    void mcp
      .close()
      .catch(() => undefined)
      .finally(() => process.exit(0));
  };
  process.stdin.on('end', () => shutdown('stdin closed'));
  process.stdin.on('close', () => shutdown('stdin closed'));
  process.stdout.on('error', (error) => shutdown(`stdout: ${errorText(error)}`));
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => shutdown(signal));

  await mcp.connect(new StdioServerTransport());
  log('info', `Kimi Service MCP server ${version} ready on stdio (pid ${process.pid})`);
}

main().catch((error: unknown) => {
  process.stderr.write(`kimi-service mcp: ${errorText(error)}\n`);
  process.exit(1);
});
