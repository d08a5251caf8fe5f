/**
 * Finding the SGLang servers of a host ("Kimi Service: Add server"): one remote command lists the
 * service units and shows the ExecStart of each; the pure functions here pick the ones that
 * launch SGLang and derive a `kimiService.servers` entry (url from --host/--port, a unique name).
 */
import { findServerCommand, modelPathOf } from '../../engine/engine';
import { serverUrlOf, type DiscoveredUnit, type HostDiscovery } from '../discovered';
import type { HostCommand } from '../../transport/shell';
import { parseExecStartProperty } from './systemd';
import { systemdDiscoveryWhat, systemdDiscoveryWhere } from '../../present/words/targetWords';

const PROPERTIES = 'Id,Description,ActiveState,FragmentPath,ExecStart';

/**
 * What one exec runs: the login's uid (restarts need sudo when it is not root), the service units
 * (loaded ones and unit files, templates left out), then one `systemctl show` of them all. Unit
 * names are filtered to systemd's alphabet before they reach xargs, so nothing else is passed to
 * systemctl. Constant text: nothing of the host or the user is spliced into it.
 */
export const DISCOVERY_SCRIPT =
  'id -u; { systemctl list-units --type=service --all --no-legend --plain --no-pager; systemctl list-unit-files --type=service --no-legend --no-pager; } 2>/dev/null' +
  " | awk '{print $1}' | grep -E '^[A-Za-z0-9_][A-Za-z0-9:_.@-]*[.]service$' | grep -v '@[.]service$' | sort -u" +
  ` | xargs -r env TZ=UTC systemctl show --no-pager -p ${PROPERTIES}`;

/** The listing as a request: a pipeline, so `sh -c` of the constant script (shellLine quotes it). */
export const DISCOVERY_COMMAND: HostCommand = { argv: ['sh', '-c', DISCOVERY_SCRIPT] };

/** `systemctl show` of several units: blocks of KEY=VALUE separated by blank lines; a key may repeat (ExecStart). */
function showBlocks(text: string): Map<string, string[]>[] {
  const blocks: Map<string, string[]>[] = [];
  let current: Map<string, string[]> | undefined;
  for (const line of text.split('\n')) {
    if (line.trim() === '') {
      current = undefined;
      continue;
    }
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    if (!current) blocks.push((current = new Map()));
    const key = line.slice(0, eq);
    const values = current.get(key);
    if (values) values.push(line.slice(eq + 1));
    else current.set(key, [line.slice(eq + 1)]);
  }
  return blocks;
}

/** The units of `systemctl show` output whose ExecStart launches SGLang or vLLM, by unit name. */
export function parseDiscovery(stdout: string): DiscoveredUnit[] {
  const found: DiscoveredUnit[] = [];
  for (const block of showBlocks(stdout)) {
    const unit = block.get('Id')?.[0];
    if (!unit) continue;
    const argv = (block.get('ExecStart') ?? []).map(parseExecStartProperty).find((a) => findServerCommand(a) !== null);
    if (!argv) continue;
    found.push({
      unit,
      entry: { unit },
      sudoUnlessRoot: true,
      description: block.get('Description')?.[0] ?? '',
      activeState: block.get('ActiveState')?.[0] ?? '',
      fragmentPath: block.get('FragmentPath')?.[0] ?? '',
      argv,
      modelPath: modelPathOf(argv),
      url: serverUrlOf(argv),
    });
  }
  return found.sort((a, b) => a.unit.localeCompare(b.unit));
}

/** How the systemd kind finds a host's servers: one command, and its reader. */
export const unitDiscovery: HostDiscovery = {
  get what() {
    return systemdDiscoveryWhat();
  },
  get where() {
    return systemdDiscoveryWhere();
  },
  command: DISCOVERY_COMMAND,
  parse: parseDiscovery,
};
