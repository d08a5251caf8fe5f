/**
 * A host's model servers as a target kind finds them ("Kimi Service: Add server", `kimi-service
 * discover`), and the name a new `kimiService.servers` entry gets. Pure; each kind that can list
 * a host's servers gives a HostDiscovery (target.ts lists them).
 */
import { ENGINES, engineFor, getFlag } from '../engine/engine';
import type { HostCommand } from '../transport/shell';

export interface DiscoveredUnit {
  /** What the listing calls it (a unit's name, "sglang-k26.service"; a batch job's name): unique among a host's. */
  readonly unit: string;
  /** The fields that name it in a `kimiService.servers` entry: `{ unit }`, or the kind's own. */
  readonly entry: Readonly<Record<string, unknown>>;
  /** Restarting it takes sudo when the login is not root (a unit); false when the login's own rights do (a job). */
  readonly sudoUnlessRoot: boolean;
  readonly description: string;
  readonly activeState: string;
  readonly fragmentPath: string;
  /** The command line that launches the model server. */
  readonly argv: readonly string[];
  readonly modelPath: string | undefined;
  /** The server's address as seen from the host, from --host/--port. */
  readonly url: string;
}

/** One remote command that lists the host's servers of a kind, and the reader of its output. */
export interface HostDiscovery {
  /** What it lists, in the words for "none found": "systemd unit". */
  readonly what: string;
  /** Where the server command is looked for: "its ExecStart". */
  readonly where: string;
  /** A request as every Target operation's (run through `targetIo`); its output's first line is the login's uid (`id -u`): restarts need sudo when it is not root. */
  readonly command: HostCommand;
  parse(stdout: string): DiscoveredUnit[];
}

/** "gpu1-sglang-k26" (host, then the unit without .service), made unique among `taken`. */
export function proposeServerName(host: string, unit: string, taken: readonly string[]): string {
  const base = `${host}-${unit.replace(/\.service$/, '')}`.slice(0, 60);
  const used = new Set(taken);
  if (!used.has(base)) return base;
  for (let n = 2; ; n++) if (!used.has(`${base}-${n}`)) return `${base}-${n}`;
}

/** Why a name typed by the user cannot be used, or undefined when it can. */
export function serverNameProblem(name: string, taken: readonly string[]): string | undefined {
  if (name.trim() === '') return 'A name is needed.';
  if (name.length > 64) return 'At most 64 characters.';
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'No control characters.';
  if (taken.includes(name)) return `"${name}" is already the name of a server in kimiService.servers.`;
  return undefined;
}

/** The port the server listens on, from --port; the engine's own default otherwise (SGLang 30000, vLLM 8000). */
export function serverPortOf(argv: readonly string[]): number {
  const portText = getFlag(argv, '--port');
  return portText !== undefined && /^\d{1,5}$/.test(portText) && Number(portText) >= 1 && Number(portText) <= 65535
    ? Number(portText)
    : // The first engine's for a command line of none.
      (engineFor(argv) ?? ENGINES[0]!).defaultPort;
}

/** The address the server listens on, as reached from the host itself: 0.0.0.0 and :: become 127.0.0.1. */
export function serverUrlOf(argv: readonly string[]): string {
  const host = getFlag(argv, '--host');
  const port = serverPortOf(argv);
  // An environment reference ($HOST) cannot be read here: the host's own loopback is the best guess, as the default port is.
  const unknown = host === undefined || host === '' || host.includes('$');
  let address = unknown || host === '0.0.0.0' || host === '::' || host === '[::]' ? '127.0.0.1' : host;
  if (address.includes(':') && !address.startsWith('[')) address = `[${address}]`;
  return `http://${address}:${port}`;
}
