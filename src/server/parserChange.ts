/**
 * The "enable parsers" flow on the GPU host: read the unit, plan, confirm, write a drop-in,
 * daemon-reload. The caller restarts and watches; on a failed start it calls `rollback`.
 * No VS Code here: everything reaches the world through `ParserChangeDeps`.
 */
import { normalizeUnit, quote, withSudo, isSudoPasswordError } from '../remote/shell';
import {
  findServerInUnit,
  parseSystemctlCat,
  planParserChange,
  renderDropIn,
  type ParserChoice,
  type ParsedUnit,
} from './execStart';
import { validateParserName } from './parserNames';
import { parseExecStartProperty, parseShow } from './systemd';

export interface ParserChangeDeps {
  exec(command: string): Promise<{ stdout: string; stderr: string; code: number | null }>;
  readonly sudo: boolean;
  log(line: string): void;
  /** Shows the diff; resolves true to go on. */
  confirmDiff(diff: string): Promise<boolean>;
  /** Defaults to /etc/systemd/system (tests point it elsewhere). */
  readonly unitDir?: string;
  readonly now?: () => Date;
}

export const DROP_IN_NAME = '50-kimi-parsers.conf';

/** What `rollback` needs to restore the state before the change exactly. */
export interface RollbackPlan {
  readonly unit: string;
  readonly dropInPath: string;
  /** Content of the drop-in before the change; null when there was none. */
  readonly previousContent: string | null;
  /** Copy of the previous drop-in kept next to it (set when previousContent is not null). */
  readonly backupPath?: string;
  /** The `.d` directory did not exist before. */
  readonly createdDir: boolean;
}

export type EnableResult =
  | { readonly kind: 'already-set'; readonly argv: readonly string[] }
  | { readonly kind: 'cancelled' }
  | {
      readonly kind: 'changed';
      readonly rollback: RollbackPlan;
      readonly oldArgv: readonly string[];
      readonly newArgv: readonly string[];
      readonly diff: string;
    };

export class ParserChangeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ParserChangeError';
  }
}

async function run(deps: ParserChangeDeps, what: string, command: string): Promise<string> {
  const r = await deps.exec(command);
  if (r.code !== 0) {
    const hint = isSudoPasswordError(r.stderr) ? ' (sudo asks for a password: allow passwordless sudo for this user, or connect as root)' : '';
    throw new ParserChangeError(`${what} failed (exit ${r.code ?? 'signal'})${hint}: ${r.stderr.trim().slice(0, 500)}`);
  }
  return r.stdout;
}

/** A POSIX script run by `sh -c`, with sudo when configured. */
function script(lines: readonly string[], sudo: boolean): string {
  return withSudo(`sh -c ${quote(lines.join('\n'))}`, sudo);
}

function timestamp(d: Date): string {
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}-${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`;
}

async function readUnit(deps: ParserChangeDeps, unit: string): Promise<{ parsed: ParsedUnit; show: Record<string, string> }> {
  const cat = await run(deps, 'systemctl cat', `systemctl cat --no-pager -- ${quote(unit)}`);
  const show = parseShow(await run(deps, 'systemctl show', `systemctl show --no-pager -p FragmentPath,DropInPaths,ExecStart -- ${quote(unit)}`));
  return { parsed: parseSystemctlCat(cat), show };
}

function serverCommandOf(parsed: ParsedUnit, unit: string): NonNullable<ReturnType<typeof findServerInUnit>> {
  const found = findServerInUnit(parsed);
  if (!found) {
    const first = parsed.commands[0]?.argv.join(' ') ?? '(none)';
    throw new ParserChangeError(`${unit}: no SGLang server command in ExecStart (${first.slice(0, 200)})`);
  }
  if (parsed.commands.length > 1) {
    throw new ParserChangeError(`${unit}: ExecStart has ${parsed.commands.length} commands; only a single command line can be rewritten`);
  }
  return found;
}

export async function enableParsers(deps: ParserChangeDeps, unitName: string, choice: ParserChoice): Promise<EnableResult> {
  const unit = normalizeUnit(unitName);
  for (const [kind, name] of [['tool-call', choice.toolCallParser], ['reasoning', choice.reasoningParser]] as const) {
    const error = validateParserName(kind, name);
    if (error) throw new ParserChangeError(error);
  }
  const unitDir = deps.unitDir ?? '/etc/systemd/system';
  const dir = `${unitDir}/${unit}.d`;
  const dropInPath = `${dir}/${DROP_IN_NAME}`;

  const { parsed, show } = await readUnit(deps, unit);
  for (const w of parsed.warnings) deps.log(`unit: ${w}`);
  if (!show.FragmentPath) throw new ParserChangeError(`${unit}: systemd knows no unit file for it (FragmentPath is empty)`);
  const { command } = serverCommandOf(parsed, unit);
  deps.log(`ExecStart of ${unit} (from ${command.file ?? 'unit'}): ${command.argv.join(' ')}`);

  const plan = planParserChange(command.argv, choice);
  if (plan.kind === 'unsupported') throw new ParserChangeError(plan.reason);
  if (plan.kind === 'already-set') {
    deps.log(`--tool-call-parser ${choice.toolCallParser} and --reasoning-parser ${choice.reasoningParser} are already set; nothing to change`);
    return { kind: 'already-set', argv: command.argv };
  }
  // Drop-ins are read in file-name order: one sorting after ours would still win.
  const source = command.file;
  if (source && source.includes('.d/') && source !== dropInPath && basename(source) > DROP_IN_NAME) {
    throw new ParserChangeError(`ExecStart is set in ${source}, which systemd reads after ${DROP_IN_NAME}; change that file instead`);
  }
  if (!(await deps.confirmDiff(plan.diff))) return { kind: 'cancelled' };

  const text = renderDropIn(plan.newArgv, `Written by Kimi Service: --tool-call-parser ${choice.toolCallParser} --reasoning-parser ${choice.reasoningParser}`, {
    prefix: command.prefix,
    keepReferences: command.references,
  });
  const stamp = timestamp((deps.now ?? (() => new Date()))());
  const backupPath = `${dropInPath}.bak-${stamp}`;
  const tmp = `${dropInPath}.tmp-${stamp}`;
  // One script: report what exists, keep a backup, write atomically (tmp + mv).
  const out = await run(
    deps,
    'writing the drop-in',
    script(
      [
        'set -e',
        `d=${quote(dir)}; f=${quote(dropInPath)}`,
        'if [ -d "$d" ]; then echo dir=yes; else echo dir=no; fi',
        'if [ -e "$f" ]; then echo file=yes; cat -- "$f"; else echo file=no; fi',
        'mkdir -p -- "$d"',
        `if [ -e "$f" ]; then cp -p -- "$f" ${quote(backupPath)}; fi`,
        `printf '%s' ${quote(text)} > ${quote(tmp)}`,
        `chmod 0644 ${quote(tmp)}`,
        `mv -f -- ${quote(tmp)} "$f"`,
      ],
      deps.sudo,
    ),
  );
  const m = /^dir=(yes|no)\nfile=(yes|no)\n/.exec(out);
  if (!m) throw new ParserChangeError(`unexpected output while writing the drop-in: ${out.slice(0, 200)}`);
  const previousContent = m[2] === 'yes' ? out.slice(m[0].length) : null;
  const rollbackPlan: RollbackPlan = {
    unit,
    dropInPath,
    previousContent,
    ...(previousContent !== null ? { backupPath } : {}),
    createdDir: m[1] === 'no',
  };
  deps.log(`wrote ${dropInPath}${previousContent !== null ? ` (previous kept as ${backupPath})` : ''}`);
  await run(deps, 'systemctl daemon-reload', withSudo('systemctl daemon-reload', deps.sudo));
  deps.log('systemctl daemon-reload done');

  try {
    await confirmEffective(deps, unit, plan.newArgv, command.references.length === 0);
  } catch (e) {
    deps.log(`the new ExecStart did not take effect: ${(e as Error).message}; rolling back`);
    await rollback(deps, rollbackPlan);
    throw e;
  }
  return { kind: 'changed', rollback: rollbackPlan, oldArgv: command.argv, newArgv: plan.newArgv, diff: plan.diff };
}

/** After daemon-reload: the unit as systemd now reads it runs `newArgv`. */
async function confirmEffective(deps: ParserChangeDeps, unit: string, newArgv: readonly string[], compareShow: boolean): Promise<void> {
  const { parsed, show } = await readUnit(deps, unit);
  const now = findServerInUnit(parsed)?.command.argv ?? [];
  if (now.join('\0') !== newArgv.join('\0')) {
    throw new ParserChangeError(`systemctl cat shows ExecStart ${now.join(' ').slice(0, 300)}`);
  }
  // show joins argv with spaces (no quoting) and expands specifiers: compare joined, without references
  const shown = show.ExecStart ? parseExecStartProperty(show.ExecStart).join(' ') : '';
  if (compareShow && shown !== '' && shown !== newArgv.join(' ')) {
    throw new ParserChangeError(`systemctl show reports ExecStart argv ${shown.slice(0, 300)}`);
  }
}

/** Restores the drop-in as it was (content or absence) and daemon-reloads. The caller restarts. */
export async function rollback(deps: ParserChangeDeps, plan: RollbackPlan): Promise<void> {
  const d = plan.dropInPath.slice(0, plan.dropInPath.lastIndexOf('/'));
  const lines = ['set -e', `f=${quote(plan.dropInPath)}`];
  if (plan.previousContent === null) {
    lines.push('rm -f -- "$f"');
    if (plan.createdDir) lines.push(`rmdir -- ${quote(d)} 2>/dev/null || true`);
  } else {
    const tmp = `${plan.dropInPath}.tmp-rollback`;
    lines.push(`printf '%s' ${quote(plan.previousContent)} > ${quote(tmp)}`, `chmod 0644 ${quote(tmp)}`, `mv -f -- ${quote(tmp)} "$f"`);
  }
  await run(deps, 'restoring the drop-in', script(lines, deps.sudo));
  deps.log(plan.previousContent === null ? `removed ${plan.dropInPath}` : `restored the previous ${plan.dropInPath}`);
  await run(deps, 'systemctl daemon-reload', withSudo('systemctl daemon-reload', deps.sudo));
  deps.log('systemctl daemon-reload done (rollback)');
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}
