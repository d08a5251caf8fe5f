/**
 * The command line of `kimi-service mcp` (or `node dist/mcp.js`): where the servers come from, as for the CLI,
 * and its help and usage errors in the display language. Pure.
 */
import * as l10n from '@vscode/l10n';

export interface McpArgs {
  /** --config FILE: the kimiService.servers schema (an array of servers, or an object of kimi settings). */
  readonly configFile?: string;
  /** --settings FILE: a VS Code settings.json (its `kimiService.*` keys). */
  readonly settingsFile?: string;
  readonly help?: boolean;
  readonly version?: boolean;
}

/**
 * `kimi-service mcp --help`, in the display language: one paragraph per message, its lines broken
 * by hand (the English at 100 columns); commands, flags, tool names, settings and paths as typed.
 */
export function mcpUsage(): string {
  const paragraphs = [
    `${l10n.t('Usage: {0}', 'kimi-service mcp [--config FILE] [--settings FILE]')}
       node dist/mcp.js [--config FILE] [--settings FILE]`,
    l10n.t(
      'The Kimi Service MCP server (stdio): tools {0}, {1}, {2},\n{3} and {4} over one verified SSH connection per server.',
      'kimi_status',
      'kimi_restart',
      'kimi_wait',
      'kimi_verify_parsers',
      'kimi_logs',
    ),
    l10n.t(
      'Servers come from, in order: --config FILE (the kimiService.servers schema: an array of servers, or an\nobject of kimi settings), {0}, --settings FILE (a VS Code\nsettings.json) or the user\'s VS Code settings.json. Unknown host keys are refused (hostKeyPolicy\n"ask" acts as "strict": nobody can be asked); add the key to the known-hosts file first.\nWith confirmRestart on (the default) kimi_restart asks the user through the client (MCP\nelicitation), or, when the client cannot ask, is refused until the call carries confirmed: true.\nA server API key that is not in the unit\'s command line: KIMI_API_KEY in the environment.',
      '$XDG_CONFIG_HOME/kimi-service/servers.json',
    ),
    `${l10n.t('Add it to Claude Code:')}  claude mcp add kimi -- kimi-service mcp
${l10n.t('("{0}" in VS Code puts the command in PATH.)', "Kimi Service: Install 'kimi-service' command in PATH")}`,
  ];
  return `${paragraphs.join('\n\n')}\n`;
}

/** Parses argv (without node and the script); an error names the offending argument. */
export function parseMcpArgs(argv: readonly string[]): { ok: true; args: McpArgs } | { ok: false; error: string } {
  const args: { configFile?: string; settingsFile?: string; help?: boolean; version?: boolean } = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const [flag, inline] = arg.startsWith('--') && eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
    switch (flag) {
      case '--config':
      case '--settings': {
        const value = inline ?? argv[++i];
        if (value === undefined || value === '' || (inline === undefined && value.startsWith('--')))
          return { ok: false, error: l10n.t('{0} needs a file name', flag) };
        if (flag === '--config') args.configFile = value;
        else args.settingsFile = value;
        break;
      }
      case '-h':
      case '--help':
        args.help = true;
        break;
      case '--version':
        args.version = true;
        break;
      default:
        return {
          ok: false,
          error: l10n.t(
            'unknown argument {0} (known: --config FILE, --settings FILE, --help, --version)',
            JSON.stringify(arg),
          ),
        };
    }
  }
  return { ok: true, args };
}
