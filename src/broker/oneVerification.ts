/**
 * One parser verification at a time per server, on the owner: a second ask while one runs
 * (another window, the chat model of a client) shares it and gets its log lines, instead of
 * sending the verification's requests to the server a second time.
 */
import type { ServerProfile } from '../config/config';
import type { ParserVerification } from '../fleet/fleetTypes';

type Verify = (server: ServerProfile, log: (line: string) => void) => Promise<ParserVerification>;

export class OneVerification {
  private readonly running = new Map<
    string,
    { readonly promise: Promise<ParserVerification>; readonly logs: Set<(line: string) => void> }
  >();

  constructor(private readonly verify: Verify) {}

  async run(server: ServerProfile, log: (line: string) => void): Promise<ParserVerification> {
    const running = this.running.get(server.name);
    if (running) {
      running.logs.add(log);
      try {
        return await running.promise;
      } finally {
        running.logs.delete(log);
      }
    }
    const logs = new Set([log]);
    const promise = this.verify(server, (line) => {
      for (const each of logs) each(line);
    });
    this.running.set(server.name, { promise, logs });
    try {
      return await promise;
    } finally {
      this.running.delete(server.name);
    }
  }
}
