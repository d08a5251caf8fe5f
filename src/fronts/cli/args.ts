/**
 * The command line of `kimi-service`, parsed by node's own util.parseArgs. Pure: argv in, a
 * command (or a usage error, or help) out. Nothing here reads a file or the environment.
 */
import { parseArgs } from 'node:util';
import type { ServerFlags } from '../../fleet/servers/standalone';
import { DEFAULT_PARSER } from '../../engine/parserNames';
import { CLI_LIMITS } from './limits';

export const COMMANDS = [
  'status',
  'restart',
  'wait',
  'logs',
  'verify',
  'forward',
  'parsers',
  'discover',
  'advice',
] as const;
/** `kimi-service mcp [--config FILE] [--settings FILE]`: the MCP server on stdio (dist/mcp.js; main.ts hands it over). */
export const MCP_VERB = 'mcp';
/** `parsers ACTION`. */
export const PARSER_ACTIONS = ['enable', 'rollback'] as const;
export type ParserAction = (typeof PARSER_ACTIONS)[number];
export type CommandName = (typeof COMMANDS)[number];

export interface CliCommand {
  readonly command: CommandName;
  readonly server: string | undefined;
  readonly json: boolean;
  readonly verbose: boolean;
  readonly configFile: string | undefined;
  readonly settingsFile: string | undefined;
  readonly flags: ServerFlags;
  /** restart: restart even when a load is already under way. */
  readonly force: boolean;
  /** restart: no question on a terminal. */
  readonly yes: boolean;
  /** restart: then wait, as `wait` does (its exit codes). */
  readonly wait: boolean;
  /** wait (and restart --wait): seconds. */
  readonly timeoutSeconds: number;
  /** logs: lines. */
  readonly lines: number;
  /** forward: the local port asked for (else the server's port when free, else any free one). */
  readonly localPort?: number;
  /** parsers: what to do, and the parser names for enable. */
  readonly parsers?: {
    readonly action: ParserAction;
    readonly reasoningParser: string;
    readonly toolCallParser: string;
  };
  /** discover: the host as typed (`[user@]host[:port]`), and the unit to add to the servers file. */
  readonly discover?: { readonly host: string; readonly add?: string; readonly name?: string };
  /** advice --apply N: the suggestion to apply (1-based). */
  readonly apply?: number;
}

export type ParsedArgs =
  | { readonly kind: 'command'; readonly command: CliCommand }
  | { readonly kind: 'help'; readonly text: string }
  | { readonly kind: 'version' }
  | { readonly kind: 'error'; readonly message: string };

/** Options every subcommand takes. */
const COMMON = [
  'server',
  'json',
  'verbose',
  'config',
  'settings',
  'host',
  'unit',
  'url',
  'port',
  'user',
  'identity-file',
  'sudo',
  'help',
] as const;

/** The options a subcommand takes besides the common ones. */
const OWN: Record<CommandName, readonly string[]> = {
  status: [],
  restart: ['force', 'yes', 'wait', 'timeout'],
  wait: ['timeout'],
  logs: ['lines'],
  verify: [],
  forward: ['local-port'],
  parsers: ['yes', 'timeout', 'reasoning-parser', 'tool-call-parser'],
  discover: ['add', 'name'],
  advice: ['apply', 'yes', 'timeout'],
};

const OPTIONS = {
  server: { type: 'string' },
  json: { type: 'boolean' },
  verbose: { type: 'boolean', short: 'v' },
  config: { type: 'string' },
  settings: { type: 'string' },
  host: { type: 'string' },
  unit: { type: 'string' },
  url: { type: 'string' },
  port: { type: 'string' },
  user: { type: 'string' },
  'identity-file': { type: 'string' },
  sudo: { type: 'boolean' },
  force: { type: 'boolean' },
  yes: { type: 'boolean', short: 'y' },
  wait: { type: 'boolean' },
  timeout: { type: 'string' },
  lines: { type: 'string', short: 'n' },
  'local-port': { type: 'string' },
  'reasoning-parser': { type: 'string' },
  'tool-call-parser': { type: 'string' },
  add: { type: 'string' },
  name: { type: 'string' },
  apply: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

export const USAGE = `Usage: kimi-service <command> [options]

Restart and watch an SGLang model server (a systemd unit on a GPU host) over one verified
SSH connection: the same core as the Kimi Service VS Code extension.

Commands:
  status                 the server's state now (one line), exit 0
  restart                systemctl restart the unit, or attach to a load already under way
                         (says which), exit 0 once issued; does not wait unless --wait
  wait [--timeout S]     wait until ready / failed / S seconds (default ${CLI_LIMITS.waitDefaultSeconds}, max ${CLI_LIMITS.waitMaxSeconds}):
                         one line per state change, a progress line at most every 10 s,
                         then a summary line; exit 0 ready, 1 failed, 2 timed out
  logs [-n N]            the last N lines (default ${CLI_LIMITS.logLinesDefault}) of the unit's journal, secrets masked
  verify                 check that an agent's turn works (reasoning, tool calls, round trip, parallel calls); exit 0 all passed, 1 not
  advice [--apply N]      what would make the next load faster, each with the evidence in the last
                         load, the published figure and its source; --apply N: add suggestion N to
                         the unit's command line (a drop-in, after the diff is confirmed, or --yes),
                         restart, wait (--timeout S), and roll back if the server then fails
  forward [NAME] [--local-port N]
                         the server on this machine: 127.0.0.1:N (default: the server's port when free,
                         else any free one) tunnelled through the SSH connection; prints the base URL
                         (http://127.0.0.1:N/v1) and runs until Ctrl-C (then exit 0); exit 1 when the
                         host forbids TCP forwarding, 5 when the port is taken or the server is local
  parsers enable [--reasoning-parser P] [--tool-call-parser P] [--yes] [--timeout S]
                         add the parser flags (default kimi_k2 for both) to the server's command line:
                         shows the diff, asks on a terminal (a script must pass --yes), writes a systemd
                         drop-in (or the compose file), restarts and waits as restart --wait does
  parsers rollback [--yes] [--timeout S]
                         put back the command line from before the last parser change (the host says
                         what it was), restart and wait; exit 0 also when there is nothing to roll back
  discover [user@]HOST[:PORT] [--add UNIT [--name NAME]]
                         list HOST's systemd units that launch SGLang or vLLM (one line each, or JSON
                         entries with --json); --add writes UNIT's entry into the servers file
                         (--config FILE, else $XDG_CONFIG_HOME/kimi-service/servers.json)
  mcp [--config FILE] [--settings FILE]
                         the MCP server on stdio (tools kimi_status, kimi_restart, kimi_wait,
                         kimi_verify_parsers, kimi_logs) for Claude Code, Cursor or any MCP client

Options:
  --server NAME          which server (default: kimiService.activeServer, else the first)
  --json                 JSON lines on stdout (one object per line)
  --config FILE          servers file (the kimiService.servers schema: an array of servers, or {"servers": [...], ...})
  --settings FILE        a VS Code settings.json (its kimiService.* settings)
  --host H --unit U [--url URL] [--port P] [--user NAME] [--identity-file F] [--sudo]
                         one server from flags (when no settings file is found)
  --force                restart: restart even when a load is already under way
  --yes, -y              restart, parsers, advice --apply: do not ask on a terminal (a script is never
                         asked to restart; parsers and advice --apply need --yes in a script, since they
                         change the unit)
  --wait                 restart: then wait as \`wait\` does (its --timeout, its exit codes)
  --verbose, -v          the core's log lines on stderr
  --help, -h             this text

Servers come from --config FILE, else $XDG_CONFIG_HOME/kimi-service/servers.json, else --host/--unit
flags, else --settings FILE or the user's VS Code settings.json.

Exit codes: 0 done (wait: ready), 1 failed, 2 wait timed out, 3 host unreachable,
4 host key refused, 5 bad configuration or usage (nothing was run), 6 wait saw the load
become stalled (no witness moved for kimiService.stallSeconds; the load goes on), 130/143 interrupted.
`;

function seconds(text: string): number | string {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) return `--timeout "${text}" is not a number of seconds`;
  if (value < 0) return '--timeout must not be negative';
  if (value > CLI_LIMITS.waitMaxSeconds)
    return `--timeout is at most ${CLI_LIMITS.waitMaxSeconds} seconds (call wait again for longer)`;
  return value;
}

function integer(name: string, text: string, min: number, max: number): number | string {
  if (!/^\d+$/.test(text.trim())) return `${name} "${text}" is not a whole number`;
  const value = Number(text);
  if (value < min || value > max) return `${name} must be between ${min} and ${max}`;
  return value;
}

export function parseCliArgs(argv: readonly string[]): ParsedArgs {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true; strict: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    return { kind: 'error', message: (error as Error).message };
  }
  const { values, positionals } = parsed;
  if (values.version) return { kind: 'version' };
  if (positionals.length === 0)
    return values.help
      ? { kind: 'help', text: USAGE }
      : { kind: 'error', message: `no command given (one of ${COMMANDS.join(', ')})` };
  const name = positionals[0]!;
  if (!(COMMANDS as readonly string[]).includes(name))
    return { kind: 'error', message: `unknown command "${name}" (one of ${COMMANDS.join(', ')})` };
  const command = name as CommandName;
  if (values.help) return { kind: 'help', text: USAGE };
  // forward NAME: the server may be named without --server; parsers ACTION; discover HOST.
  const named = command === 'forward' && positionals.length >= 2 ? positionals[1] : undefined;
  const operand =
    (command === 'parsers' || command === 'discover') && positionals.length >= 2 ? positionals[1] : undefined;
  const extra = named !== undefined || operand !== undefined ? 2 : 1;
  if (positionals.length > extra) return { kind: 'error', message: `unexpected argument "${positionals[extra]}"` };
  if (command === 'parsers' && !(PARSER_ACTIONS as readonly string[]).includes(operand ?? ''))
    return {
      kind: 'error',
      message:
        operand === undefined
          ? `parsers needs an action (${PARSER_ACTIONS.join(' or ')})`
          : `unknown parsers action "${operand}" (${PARSER_ACTIONS.join(' or ')})`,
    };
  if (command === 'discover' && operand === undefined)
    return { kind: 'error', message: 'discover needs a host ([user@]host[:port])' };
  if (named !== undefined && values.server !== undefined && values.server !== named) {
    return { kind: 'error', message: `two servers named: "${named}" and --server "${values.server}"` };
  }

  const allowed = new Set<string>([...COMMON, ...OWN[command]]);
  for (const key of Object.keys(values)) {
    if (!allowed.has(key)) return { kind: 'error', message: `--${key} is not an option of ${command}` };
  }
  if (command === 'parsers' && operand === 'rollback') {
    for (const key of ['reasoning-parser', 'tool-call-parser'] as const)
      if (values[key] !== undefined) return { kind: 'error', message: `--${key} goes with parsers enable` };
  }
  if (values.name !== undefined && values.add === undefined)
    return { kind: 'error', message: '--name goes with discover --add UNIT' };
  if (values.timeout !== undefined && command === 'restart' && !values.wait)
    return { kind: 'error', message: '--timeout goes with restart --wait' };
  if (
    (values.host !== undefined || values.unit !== undefined) &&
    (values.config !== undefined || values.settings !== undefined)
  ) {
    return {
      kind: 'error',
      message: 'give either a settings file (--config, --settings) or a server with --host and --unit, not both',
    };
  }

  let timeoutSeconds: number = CLI_LIMITS.waitDefaultSeconds;
  if (values.timeout !== undefined) {
    const t = seconds(values.timeout);
    if (typeof t === 'string') return { kind: 'error', message: t };
    timeoutSeconds = t;
  }
  let lines: number = CLI_LIMITS.logLinesDefault;
  if (values.lines !== undefined) {
    const n = integer('-n', values.lines, 1, CLI_LIMITS.logLinesMax);
    if (typeof n === 'string') return { kind: 'error', message: n };
    lines = n;
  }
  let localPort: number | undefined;
  if (values['local-port'] !== undefined) {
    const p = integer('--local-port', values['local-port'], 1, 65535);
    if (typeof p === 'string') return { kind: 'error', message: p };
    localPort = p;
  }
  let apply: number | undefined;
  if (values.apply !== undefined) {
    const n = integer('--apply', values.apply, 1, 99);
    if (typeof n === 'string') return { kind: 'error', message: n };
    apply = n;
  }
  let port: number | undefined;
  if (values.port !== undefined) {
    const p = integer('--port', values.port, 1, 65535);
    if (typeof p === 'string') return { kind: 'error', message: p };
    port = p;
  }
  const hasServerFlag =
    values.url !== undefined ||
    port !== undefined ||
    values.user !== undefined ||
    values['identity-file'] !== undefined ||
    values.sudo !== undefined;
  if (hasServerFlag && values.host === undefined && values.unit === undefined) {
    return {
      kind: 'error',
      message: '--url, --port, --user, --identity-file and --sudo describe a server given with --host and --unit',
    };
  }
  const flags: ServerFlags = {
    ...(values.host !== undefined ? { host: values.host } : {}),
    ...(values.unit !== undefined ? { unit: values.unit } : {}),
    ...(values.url !== undefined ? { url: values.url } : {}),
    ...(port !== undefined ? { port } : {}),
    ...(values.user !== undefined ? { username: values.user } : {}),
    ...(values['identity-file'] !== undefined ? { identityFile: values['identity-file'] } : {}),
    ...(values.sudo !== undefined ? { sudo: values.sudo } : {}),
  };
  return {
    kind: 'command',
    command: {
      command,
      server: named ?? values.server,
      json: values.json ?? false,
      verbose: values.verbose ?? false,
      configFile: values.config,
      settingsFile: values.settings,
      flags,
      force: values.force ?? false,
      yes: values.yes ?? false,
      wait: values.wait ?? false,
      timeoutSeconds,
      lines,
      ...(localPort !== undefined ? { localPort } : {}),
      ...(command === 'parsers'
        ? {
            parsers: {
              action: operand as ParserAction,
              reasoningParser: values['reasoning-parser'] ?? DEFAULT_PARSER,
              toolCallParser: values['tool-call-parser'] ?? DEFAULT_PARSER,
            },
          }
        : {}),
      ...(command === 'discover'
        ? {
            discover: {
              host: operand!,
              ...(values.add !== undefined ? { add: values.add } : {}),
              ...(values.name !== undefined ? { name: values.name } : {}),
            },
          }
        : {}),
      ...(apply !== undefined ? { apply } : {}),
    },
  };
}
