/**
 * The command line of `kimi-service mcp` (or `node dist/mcp.js`): where the servers come from, as for the CLI. Pure.
 */

export interface McpArgs {
  /** --config FILE: the kimiService.servers schema (an array of servers, or an object of kimi settings). */
  readonly configFile?: string;
  /** --settings FILE: a VS Code settings.json (its `kimiService.*` keys). */
  readonly settingsFile?: string;
  readonly help?: boolean;
  readonly version?: boolean;
}

export const MCP_USAGE = `Usage: kimi-service mcp [--config FILE] [--settings FILE]
       node dist/mcp.js [--config FILE] [--settings FILE]

The Kimi Service MCP server (stdio): tools kimi_status, kimi_restart, kimi_wait,
kimi_verify_parsers and kimi_logs over one verified SSH connection per server.

Servers come from, in order: --config FILE (the kimiService.servers schema: an array of servers, or an
object of kimi settings), $XDG_CONFIG_HOME/kimi-service/servers.json, --settings FILE (a VS Code
settings.json) or the user's VS Code settings.json. Unknown host keys are refused (hostKeyPolicy
"ask" acts as "strict": nobody can be asked); add the key to the known-hosts file first.
With confirmRestart on (the default) kimi_restart asks the user through the client (MCP
elicitation), or, when the client cannot ask, is refused until the call carries confirmed: true.
A server API key that is not in the unit's command line: KIMI_API_KEY in the environment.

Add it to Claude Code:  claude mcp add kimi -- kimi-service mcp
("Kimi Service: Install 'kimi-service' command in PATH" in VS Code puts the command in PATH.)
`;

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
          return { ok: false, error: `${flag} needs a file name` };
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
          error: `unknown argument ${JSON.stringify(arg)} (known: --config FILE, --settings FILE, --help, --version)`,
        };
    }
  }
  return { ok: true, args };
}
