/**
 * The command line of `kimi-service`, parsed by node's own util.parseArgs. Pure: argv in, a
 * command (or a usage error, or help) out. Nothing here reads a file or the environment.
 */
import * as l10n from '@vscode/l10n';
import { parseArgs } from 'node:util';
import type { ServerFlags } from '../../fleet/servers/standalone';
import { DEFAULT_PARSER } from '../../engine/parserNames';
import { CLI_LIMITS } from './limits';
import { usage } from './usage';

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

function seconds(text: string): number | string {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) return l10n.t('--timeout "{0}" is not a number of seconds', text);
  if (value < 0) return l10n.t('--timeout must not be negative');
  if (value > CLI_LIMITS.waitMaxSeconds)
    return l10n.t('--timeout is at most {0} seconds (call wait again for longer)', CLI_LIMITS.waitMaxSeconds);
  return value;
}

function integer(name: string, text: string, min: number, max: number): number | string {
  if (!/^\d+$/.test(text.trim())) return l10n.t('{0} "{1}" is not a whole number', name, text);
  const value = Number(text);
  if (value < min || value > max) return l10n.t('{0} must be between {1} and {2}', name, min, max);
  return value;
}

/** node's words for a malformed command line, in the display language where the option is known. */
function parseArgsError(error: Error & { code?: string }): string {
  const option = /'(-[^' ]+)/.exec(error.message)?.[1];
  if (option === undefined) return error.message;
  if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return l10n.t('unknown option {0}', option);
  if (error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && /argument missing/.test(error.message))
    return l10n.t('{0} needs a value', option);
  return error.message;
}

export function parseCliArgs(argv: readonly string[]): ParsedArgs {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true; strict: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    return { kind: 'error', message: parseArgsError(error as Error & { code?: string }) };
  }
  const { values, positionals } = parsed;
  if (values.version) return { kind: 'version' };
  if (positionals.length === 0)
    return values.help
      ? { kind: 'help', text: usage() }
      : { kind: 'error', message: l10n.t('no command given (one of {0})', COMMANDS.join(', ')) };
  const name = positionals[0]!;
  if (!(COMMANDS as readonly string[]).includes(name))
    return { kind: 'error', message: l10n.t('unknown command "{0}" (one of {1})', name, COMMANDS.join(', ')) };
  const command = name as CommandName;
  if (values.help) return { kind: 'help', text: usage() };
  // forward NAME: the server may be named without --server; parsers ACTION; discover HOST.
  const named = command === 'forward' && positionals.length >= 2 ? positionals[1] : undefined;
  const operand =
    (command === 'parsers' || command === 'discover') && positionals.length >= 2 ? positionals[1] : undefined;
  const extra = named !== undefined || operand !== undefined ? 2 : 1;
  if (positionals.length > extra)
    return { kind: 'error', message: l10n.t('unexpected argument "{0}"', positionals[extra]!) };
  if (command === 'parsers' && !(PARSER_ACTIONS as readonly string[]).includes(operand ?? ''))
    return {
      kind: 'error',
      message:
        operand === undefined
          ? l10n.t('parsers needs an action ({0} or {1})', ...PARSER_ACTIONS)
          : l10n.t('unknown parsers action "{0}" ({1} or {2})', operand, ...PARSER_ACTIONS),
    };
  if (command === 'discover' && operand === undefined)
    return { kind: 'error', message: l10n.t('discover needs a host ({0})', '[user@]host[:port]') };
  if (named !== undefined && values.server !== undefined && values.server !== named) {
    return { kind: 'error', message: l10n.t('two servers named: "{0}" and --server "{1}"', named, values.server) };
  }

  const allowed = new Set<string>([...COMMON, ...OWN[command]]);
  for (const key of Object.keys(values)) {
    if (!allowed.has(key))
      return { kind: 'error', message: l10n.t('{0} is not an option of {1}', `--${key}`, command) };
  }
  if (command === 'parsers' && operand === 'rollback') {
    for (const key of ['reasoning-parser', 'tool-call-parser'] as const)
      if (values[key] !== undefined)
        return { kind: 'error', message: l10n.t('{0} goes with {1}', `--${key}`, 'parsers enable') };
  }
  if (values.name !== undefined && values.add === undefined)
    return { kind: 'error', message: l10n.t('{0} goes with {1}', '--name', 'discover --add UNIT') };
  if (values.timeout !== undefined && command === 'restart' && !values.wait)
    return { kind: 'error', message: l10n.t('{0} goes with {1}', '--timeout', 'restart --wait') };
  if (
    (values.host !== undefined || values.unit !== undefined) &&
    (values.config !== undefined || values.settings !== undefined)
  ) {
    return {
      kind: 'error',
      message: l10n.t(
        'give either a settings file (--config, --settings) or a server with --host and --unit, not both',
      ),
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
      message: l10n.t(
        '--url, --port, --user, --identity-file and --sudo describe a server given with --host and --unit',
      ),
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
