/**
 * What a change of the server's arguments needs from its caller, whatever the target (a systemd
 * drop-in, a compose file): the host's commands, the confirmation of the diff; and its error.
 */

export interface ParserChangeDeps {
  /**
   * Runs a command on the GPU host. With `options.stdin`, the command reads that text on its
   * standard input (which is then closed), as Transport.exec does: file contents never appear
   * on a command line.
   */
  exec(
    command: string,
    options?: { readonly stdin?: string },
  ): Promise<{ stdout: string; stderr: string; code: number | null; signal?: string }>;
  /** Privileged steps (drop-in writes, daemon-reload) run as `sudo -n PROGRAM ARGS...`. */
  readonly sudo: boolean;
  /** The host, for messages (undefined: this machine). */
  readonly host?: string;
  log(line: string): void;
  /** Shows the diff; resolves true to go on. */
  confirmDiff(diff: string): Promise<boolean>;
  /** Defaults to /etc/systemd/system (tests point it elsewhere). */
  readonly unitDir?: string;
}

export class ParserChangeError extends Error {
  constructor(
    message: string,
    /** sudo itself refused (a password, or no rule): nothing was run. */
    readonly sudoRefused = false,
  ) {
    super(message);
    this.name = 'ParserChangeError';
  }
}
