/** Where the server says it listens, followed only to an address the host has (announcedAddress.ts decides). */
import { errorText } from '../../util/errors';
import { decideAnnouncedUrl } from './announcedAddress';
import { parseResolved, resolveCommand } from '../../host/hostAddresses';
import { COMMAND_TIMEOUT_MS } from './watchTypes';
import type { WitnessContext } from './witness';
import { announcedFollowed, cannotResolveOnHost } from '../../present/words/watchWords';

export class AnnouncedUrlFollower {
  /** The last address the server announced (its log's HTTP line). */
  private announced: string | undefined;
  /** The host's own addresses, from the sampler's first line. */
  private hostAddresses: readonly string[] | undefined;
  private readonly resolvedNames = new Map<string, readonly string[]>();
  private readonly resolving = new Set<string>();
  /** Announced urls not followed, each said once. */
  private readonly kept = new Set<string>();
  private stopped = false;

  constructor(private readonly ctx: WitnessContext) {}

  /**
   * The server says where it listens; when that is not the configured url, use what it said if
   * the host has that address, else keep the configured url and say why.
   */
  onAnnounced(announced: string): void {
    const { deps } = this.ctx;
    // The url follows the job's node: the login node's addresses say nothing of where the server listens.
    if (deps.http.followsNode) return;
    this.announced = announced;
    const decision = decideAnnouncedUrl(deps.http.baseUrl, announced, {
      addresses: this.hostAddresses,
      resolved: this.resolvedNames,
    });
    if (decision.kind === 'switch') {
      deps.http.setBaseUrl(decision.url);
      this.ctx.alertOnce({ kind: 'url', level: 'warn', message: announcedFollowed(decision.message, decision.url) });
    } else if (decision.kind === 'keep' && !this.kept.has(announced)) {
      this.kept.add(announced);
      deps.log('warn', decision.message);
    } else if (decision.kind === 'needResolve') void this.resolveOnHost(decision.name);
  }

  /** The sampler read the host's addresses: an announcement waiting for them is decided now. */
  onHostAddresses(addresses: readonly string[]): void {
    this.hostAddresses = addresses;
    if (this.announced !== undefined) this.onAnnounced(this.announced);
  }

  stop(): void {
    this.stopped = true;
  }

  private async resolveOnHost(name: string): Promise<void> {
    if (this.resolving.has(name)) return;
    this.resolving.add(name);
    const { deps } = this.ctx;
    let addresses: readonly string[] = [];
    try {
      const result = await deps.transport.exec(resolveCommand(name), { timeoutMs: COMMAND_TIMEOUT_MS });
      addresses = parseResolved(result.stdout);
    } catch (error) {
      deps.log('warn', cannotResolveOnHost(name, errorText(error)));
    }
    this.resolvedNames.set(name, addresses);
    if (!this.stopped && this.announced !== undefined) this.onAnnounced(this.announced);
  }
}
