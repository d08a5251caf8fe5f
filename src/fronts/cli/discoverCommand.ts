/**
 * `kimi-service discover [user@]HOST[:PORT] [--add UNIT [--name NAME]]`: the fleet's discovery
 * verb on the command line. Lists the host's units that launch SGLang or vLLM; --add writes the
 * chosen unit's entry into the servers file, keeping the file's comments and other servers.
 */
import * as l10n from '@vscode/l10n';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { HostKeyPolicy } from '../../config/config';
import { engineLabels } from '../../engine/engine';
import { DiscoveryError, discoverUnits, entryFor, nothingFoundMessage } from '../../fleet/servers/discovery';
import { parseTypedHost } from '../../fleet/servers/serverEntry';
import { addServerToText, serverNamesIn } from '../../fleet/servers/serversFile';
import type { SessionUi } from '../../fleet/sessions/sessionFactory';
import type { LogLevel } from '../../monitor/watch/watchTypes';
import { refusalMessage } from '../../present/refusalWords';
import { TransportError } from '../../transport/transport';
import { maskSecrets } from '../../util/secrets';
import type { CliCommand } from './args';
import { EXIT, exitForRefusal } from './exitCodes';
import { errorLine, jsonLine } from './format';

export interface DiscoverContext {
  readonly cmd: CliCommand;
  /** Where --add writes: --config FILE, else the XDG servers file. */
  readonly serversFile: string;
  readonly knownHostsFile: string;
  readonly hostKeyPolicy: HostKeyPolicy;
  readonly ui: SessionUi;
  stdout(line: string): void;
  stderr(line: string): void;
  interruptible<T>(work: Promise<T>): Promise<T>;
}

function readIfThere(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Written next to the file, then renamed over it: a crash leaves the old file or the new one. */
function writeAtomically(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, text, { mode: 0o644 });
  fs.renameSync(temporary, file);
}

function usageError(ctx: DiscoverContext, message: string, code: number = EXIT.config): number {
  if (ctx.cmd.json) ctx.stdout(errorLine(message, code, true, 'discover'));
  ctx.stderr(`kimi-service: ${message}`);
  return code;
}

export async function discoverCommand(ctx: DiscoverContext): Promise<number> {
  const { cmd } = ctx;
  const asked = cmd.discover!;
  const host = parseTypedHost(asked.host);
  if (typeof host === 'string') return usageError(ctx, `discover: ${host}`);
  const log = (level: LogLevel, message: string) => {
    if (cmd.verbose && level !== 'trace') ctx.stderr(`${level}: ${maskSecrets(message)}`);
  };
  let discovery;
  try {
    discovery = await ctx.interruptible(
      discoverUnits(host, { knownHostsFile: ctx.knownHostsFile, hostKeyPolicy: ctx.hostKeyPolicy }, ctx.ui, log),
    );
  } catch (error) {
    if (error instanceof TransportError) {
      const refusal = { kind: error.kind, message: error.message };
      return usageError(ctx, refusalMessage(host.host, refusal).text, exitForRefusal(error.kind));
    }
    if (error instanceof DiscoveryError) return usageError(ctx, error.message, EXIT.failed);
    throw error;
  }
  const existing = readIfThere(ctx.serversFile);
  const taken = existing !== undefined ? serverNamesIn(existing) : [];
  if (asked.add === undefined) {
    if (discovery.units.length === 0) {
      if (cmd.json) ctx.stdout(jsonLine({ event: 'discover', host: host.host, units: [] }));
      else ctx.stdout(`${host.host}: ${nothingFoundMessage(host.host)}.`);
      return EXIT.ok;
    }
    for (const unit of discovery.units) {
      const entry = entryFor(discovery, unit, taken);
      if (cmd.json)
        ctx.stdout(
          jsonLine({ event: 'unit', host: host.host, unit: unit.unit, state: unit.activeState, url: unit.url, entry }),
        );
      else
        ctx.stdout(
          `${unit.unit}  ${unit.activeState}  ${unit.url}${unit.modelPath ? `  ${unit.modelPath}` : ''}  (${l10n.t('add: {0}', `kimi-service discover ${asked.host} --add ${unit.unit}`)})`,
        );
    }
    return EXIT.ok;
  }
  const wanted = asked.add.endsWith('.service') ? asked.add : `${asked.add}.service`;
  const unit = discovery.units.find((u) => u.unit === asked.add) ?? discovery.units.find((u) => u.unit === wanted);
  if (!unit) {
    const known = discovery.units.map((u) => u.unit).join(', ') || l10n.t('none');
    return usageError(
      ctx,
      l10n.t('{0} has no unit {1} that launches {2} (found: {3})', host.host, wanted, engineLabels(), known),
    );
  }
  let entry;
  try {
    entry = entryFor(discovery, unit, taken, asked.name);
  } catch (error) {
    if (error instanceof DiscoveryError) return usageError(ctx, `${error.message} ${l10n.t('Nothing was written.')}`);
    throw error;
  }
  const added = addServerToText(existing, entry);
  if ('error' in added) return usageError(ctx, `${ctx.serversFile}: ${added.error}. ${l10n.t('Nothing was written.')}`);
  writeAtomically(ctx.serversFile, added.text);
  if (cmd.json) ctx.stdout(jsonLine({ event: 'added', file: ctx.serversFile, entry }));
  else
    ctx.stdout(
      l10n.t('added {0} ({1} on {2}, {3}) to {4}', String(entry.name), unit.unit, host.host, unit.url, ctx.serversFile),
    );
  return EXIT.ok;
}
