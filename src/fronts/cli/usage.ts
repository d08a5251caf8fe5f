/**
 * The text of `kimi-service --help`, in the display language: each description is one sentence
 * for the translators, laid out here in two columns and wrapped to the terminal's usual width.
 * Command names, flags, settings, file paths and exit codes stay as they are typed. Pure.
 */
import * as l10n from '@vscode/l10n';
import { DEFAULT_PARSER } from '../../engine/parserNames';
import { TOOL_NAMES } from '../../agent/definition';
import { CLI_LIMITS } from './limits';

const WIDTH = 100;
const LEFT = 25;
const SERVERS_FILE = '$XDG_CONFIG_HOME/kimi-service/servers.json';

/** Han, kana, fullwidth forms: two columns each, and a line may break between any two of them. */
const WIDE = /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/u;

/** Punctuation a line must not start with. */
const CLOSING = /^[，。、；：！？）」』】〉》,.;:!?)\]]$/u;

function columns(text: string): number {
  let n = 0;
  for (const ch of text) n += WIDE.test(ch) ? 2 : 1;
  return n;
}

/** `text` in lines of at most `width` columns: breaks at spaces, and between wide characters. */
export function wrap(text: string, width: number): string[] {
  const tokens = text.match(new RegExp(`${WIDE.source}|[^\\s${WIDE.source.slice(1, -1)}]+|\\s+`, 'gu')) ?? [];
  const lines: string[] = [];
  let line: string[] = [];
  const joined = (parts: readonly string[]) => parts.join('').trim();
  for (const token of tokens) {
    if (/^\s+$/.test(token)) {
      if (line.length > 0) line.push(' ');
      continue;
    }
    if (line.length > 0 && columns(joined([...line, token])) > width) {
      // A closing mark (，。；）...) never starts a line: the word before it goes down with it.
      const carried: string[] = [];
      if (CLOSING.test(token))
        do carried.unshift(line.pop()!);
        while (line.length > 1 && CLOSING.test(carried[0]!));
      lines.push(joined(line));
      line = carried;
    }
    line.push(token);
  }
  if (joined(line) !== '') lines.push(joined(line));
  return lines;
}

/** A command or option and what it does: on one line when the name is short, else the words below it. */
function row(name: string, what: string): string[] {
  const pad = ' '.repeat(LEFT);
  const words = wrap(what, WIDTH - LEFT).map((line) => pad + line);
  const head = `  ${name}`;
  if (head.length < LEFT - 1) words[0] = head.padEnd(LEFT) + words[0]!.slice(LEFT);
  else words.unshift(head);
  return words;
}

function commands(): [string, string][] {
  return [
    ['status', l10n.t("the server's state now (one line), exit 0")],
    [
      'restart',
      l10n.t(
        'systemctl restart the unit, or watch a load already under way (says which), exit 0 once issued; does not wait unless --wait',
      ),
    ],
    [
      'wait [--timeout S]',
      l10n.t(
        'wait until ready / failed / S seconds (default {0}, max {1}): one line per state change, a progress line at most every 10 s, then a summary line; exit 0 ready, 1 failed, 2 timed out',
        CLI_LIMITS.waitDefaultSeconds,
        CLI_LIMITS.waitMaxSeconds,
      ),
    ],
    [
      'logs [-n N]',
      l10n.t("the last N lines (default {0}) of the unit's journal, secrets masked", CLI_LIMITS.logLinesDefault),
    ],
    [
      'verify',
      l10n.t(
        "check that an agent's turn works (reasoning, tool calls, round trip, parallel calls); exit 0 all passed, 1 not",
      ),
    ],
    [
      'advice [--apply N]',
      l10n.t(
        "what would make the next load faster, each with the evidence in the last load, the published figure and its source; --apply N: add suggestion N to the unit's command line (a drop-in, after the diff is confirmed, or --yes), restart, wait (--timeout S), and roll back if the server then fails",
      ),
    ],
    [
      'forward [NAME] [--local-port N]',
      l10n.t(
        "the server on this machine: 127.0.0.1:N (default: the server's port when free, else any free one) tunnelled through the SSH connection; prints the base URL ({0}) and runs until Ctrl-C (then exit 0); exit 1 when the host forbids TCP forwarding, 5 when the port is taken or the server is local",
        'http://127.0.0.1:N/v1',
      ),
    ],
    [
      'parsers enable [--reasoning-parser P] [--tool-call-parser P] [--yes] [--timeout S]',
      l10n.t(
        "add the parser flags (default {0} for both) to the server's command line: shows the diff, asks on a terminal (a script must pass --yes), writes a systemd drop-in (or the compose file), restarts and waits as restart --wait does",
        DEFAULT_PARSER,
      ),
    ],
    [
      'parsers rollback [--yes] [--timeout S]',
      l10n.t(
        'put back the command line from before the last parser change (the host says what it was), restart and wait; exit 0 also when there is nothing to roll back',
      ),
    ],
    [
      'discover [user@]HOST[:PORT] [--add UNIT [--name NAME]]',
      l10n.t(
        "list HOST's systemd units that launch SGLang or vLLM (one line each, or JSON entries with --json); --add writes UNIT's entry into the servers file (--config FILE, else {0})",
        SERVERS_FILE,
      ),
    ],
    [
      'mcp [--config FILE] [--settings FILE]',
      l10n.t('the MCP server on stdio (tools {0}) for Claude Code, Cursor or any MCP client', TOOL_NAMES.join(', ')),
    ],
  ];
}

function options(): [string, string][] {
  return [
    ['--server NAME', l10n.t('which server (default: {0}, else the first)', 'kimiService.activeServer')],
    ['--json', l10n.t('JSON lines on stdout (one object per line)')],
    [
      '--config FILE',
      l10n.t(
        'servers file (the {0} schema: an array of servers, or {1})',
        'kimiService.servers',
        '{"servers": [...], ...}',
      ),
    ],
    ['--settings FILE', l10n.t('a VS Code settings.json (its {0} settings)', 'kimiService.*')],
    [
      '--host H --unit U [--url URL] [--port P] [--user NAME] [--identity-file F] [--sudo]',
      l10n.t('one server from flags (when no settings file is found)'),
    ],
    ['--force', l10n.t('restart: restart even when a load is already under way')],
    [
      '--yes, -y',
      l10n.t(
        'restart, parsers, advice --apply: do not ask on a terminal (a script is never asked to restart; parsers and advice --apply need --yes in a script, since they change the unit)',
      ),
    ],
    ['--wait', l10n.t('restart: then wait as {0} does (its --timeout, its exit codes)', '`wait`')],
    ['--verbose, -v', l10n.t("the core's log lines on stderr")],
    ['--help, -h', l10n.t('this text')],
  ];
}

/** `kimi-service --help`. */
export function usage(): string {
  const lines = [
    l10n.t('Usage: {0}', 'kimi-service <command> [options]'),
    '',
    ...wrap(
      l10n.t(
        'Restart and watch an SGLang model server (a systemd unit on a GPU host) over one verified SSH connection: the same core as the Kimi Service VS Code extension.',
      ),
      WIDTH,
    ),
    '',
    l10n.t('Commands:'),
    ...commands().flatMap(([name, what]) => row(name, what)),
    '',
    l10n.t('Options:'),
    ...options().flatMap(([name, what]) => row(name, what)),
    '',
    ...wrap(
      l10n.t(
        "Servers come from {0}, else {1}, else {2} flags, else {3} or the user's VS Code settings.json.",
        '--config FILE',
        SERVERS_FILE,
        '--host/--unit',
        '--settings FILE',
      ),
      WIDTH,
    ),
    '',
    ...wrap(
      l10n.t(
        'Exit codes: 0 done (wait: ready), 1 failed, 2 wait timed out, 3 host unreachable, 4 host key refused, 5 bad configuration or usage (nothing was run), 6 wait saw the load become stalled (no witness moved for {0}; the load goes on), 130/143 interrupted.',
        'kimiService.stallSeconds',
      ),
      WIDTH,
    ),
  ];
  return `${lines.join('\n')}\n`;
}
