/**
 * The last parser verification of each server (its summary line and its table of checks), and
 * the verb that runs one: a server found not ready is refused, nothing is sent to it.
 */
import type { ServerProfile } from '../../config/config';
import { errorText } from '../../util/errors';
import { NotReadyError } from '../fleetError';
import { isLong, progressLine, progressWord } from '../../verify/progress';
import type { FleetEvent, FleetSession, ParserVerification, ServerSnapshot, VerifyingNow } from '../fleetTypes';
import { notReadyForChecks, verifyParsersOn } from './verifyParsersOn';

/** How long a verification waits for a first look at a server nothing watched (its state decides whether to check). */
const VERIFY_LOOK_MS = 20_000;

export interface VerifyHost {
  connect(server: ServerProfile): Promise<FleetSession>;
  status(server: ServerProfile, options: { timeoutMs: number }): Promise<ServerSnapshot>;
  fire(event: FleetEvent): void;
}

export class Verifications {
  private readonly summaries = new Map<string, string>();
  private readonly tables = new Map<string, string>();
  private readonly underWay = new Map<string, VerifyingNow>();

  /** What the snapshot shows of the server's last verification. */
  of(name: string): { verification: string | undefined; verificationTable?: string; verifying?: VerifyingNow } {
    const verifying = this.underWay.get(name);
    return {
      verification: this.summaries.get(name),
      ...(verifying ? { verifying } : {}),
      ...(this.tables.has(name) ? { verificationTable: this.tables.get(name) } : {}),
    };
  }

  /** A new watch: the last verification no longer holds. */
  clear(name: string): void {
    this.summaries.delete(name);
    this.tables.delete(name);
  }

  /** Checks that reasoning and tool calling really work on the server; the summary is kept. */
  async verify(host: VerifyHost, server: ServerProfile, log: (line: string) => void): Promise<ParserVerification> {
    const session = await host.connect(server);
    // Every front alike: a server found not ready is refused, nothing is sent to it.
    const looked = await host.status(server, { timeoutMs: VERIFY_LOOK_MS });
    const notReady = notReadyForChecks(looked);
    if (notReady) throw new NotReadyError(notReady, looked);
    try {
      const { result, summary, table, verdict } = await verifyParsersOn(session, server, log, (progress) => {
        const now = Date.now();
        const verifying = {
          word: progressWord(progress),
          line: progressLine(progress, now),
          long: isLong(progress, now),
        };
        this.underWay.set(server.name, verifying);
        host.fire({ type: 'verifying', server, verifying });
      });
      this.underWay.delete(server.name);
      this.summaries.set(server.name, summary);
      this.tables.set(server.name, table);
      host.fire({ type: 'verified', server, summary, allPassed: result.allPassed, checks: result.checks });
      return { summary, allPassed: result.allPassed, table, verdict };
    } catch (error) {
      this.underWay.delete(server.name);
      const summary = `not verified (${errorText(error)})`;
      this.summaries.set(server.name, summary);
      this.tables.delete(server.name);
      host.fire({ type: 'verified', server, summary, allPassed: undefined, checks: [] });
      throw error;
    }
  }
}
