/**
 * The transport's end of the askpass helper: a Unix socket in the transport's own 0700 folder,
 * live while one master logs in, answering only requests that carry its random token. Each
 * prompt is passed to the front's SshPrompter; a cancelled one ends the login (the starting ssh
 * is killed before the helper is told, so OpenSSH sends no empty answer and asks nothing more).
 * At most `maxPrompts` questions per login. Answers are never logged.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { decodeRequest, encodeReply, FirstLine, tokenMatches, type AskpassReply } from './protocol';
import { cleanPrompt, sshPromptKind, type SshPromptKind, type SshPrompter } from './promptKind';
import {
  askpassAsks,
  askpassRefused,
  askpassWithoutToken,
  notAnswered,
  opensshSays,
  tooManyQuestions,
} from '../../../present/words/connectionWords';

/** The helper must send its request within this time of connecting. */
const REQUEST_DEADLINE_MS = 5000;
/** OpenSSH's NumberOfPasswordPrompts is 3 by default: a few keys or a token and a password fit. */
export const MAX_PROMPTS_PER_LOGIN = 6;

export interface AskpassSessionOptions {
  readonly socketPath: string;
  /** Who asks, as the prompt shows it. */
  readonly host: string;
  readonly ask: SshPrompter;
  /** Ends the login: called when a prompt is cancelled or one too many is asked. */
  readonly endLogin: () => void;
  readonly log: (message: string) => void;
  readonly maxPrompts?: number;
}

/** The variables the master's environment gets: the helper finds the socket and proves who it is. */
export interface AskpassEnv {
  readonly KIMI_ASKPASS_SOCKET: string;
  readonly KIMI_ASKPASS_TOKEN: string;
}

export class AskpassSession {
  /** The question not answered, when the login ended for want of it. */
  refused?: { readonly kind: SshPromptKind; readonly text: string };
  /** Questions passed to the user. */
  asked = 0;
  private readonly token = randomBytes(32).toString('hex');
  private readonly abort = new AbortController();
  private readonly sockets = new Set<net.Socket>();
  private closed = false;

  private constructor(
    private readonly o: AskpassSessionOptions,
    private readonly server: net.Server,
  ) {}

  static start(o: AskpassSessionOptions): Promise<AskpassSession> {
    fs.rmSync(o.socketPath, { force: true });
    const server = net.createServer();
    const session = new AskpassSession(o, server);
    server.maxConnections = 2;
    server.on('connection', (s) => session.serve(s));
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(o.socketPath, () => {
        server.off('error', reject);
        server.on('error', () => undefined);
        fs.chmodSync(o.socketPath, 0o600);
        resolve(session);
      });
    });
  }

  get env(): AskpassEnv {
    return { KIMI_ASKPASS_SOCKET: this.o.socketPath, KIMI_ASKPASS_TOKEN: this.token };
  }

  /** The socket and the token end with the login: nothing can ask after this. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort();
    this.server.close();
    for (const s of this.sockets) s.destroy();
    fs.rmSync(this.o.socketPath, { force: true });
  }

  private serve(socket: net.Socket): void {
    this.sockets.add(socket);
    const deadline = setTimeout(() => socket.destroy(), REQUEST_DEADLINE_MS);
    const line = new FirstLine();
    const onData = (chunk: Buffer) => {
      const got = line.push(chunk);
      if (got === undefined) return;
      socket.off('data', onData);
      clearTimeout(deadline);
      if (got === 'overflow') return void socket.destroy();
      void this.answer(got).then(
        (reply) => {
          if (!socket.destroyed) socket.end(encodeReply(reply));
        },
        () => socket.destroy(),
      );
    };
    socket.on('data', onData);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(deadline);
      this.sockets.delete(socket);
    });
  }

  private async answer(line: string): Promise<AskpassReply> {
    const req = decodeRequest(line);
    if (!req || !tokenMatches(this.token, req.token)) {
      this.o.log(askpassWithoutToken(this.o.host));
      return { cancel: true };
    }
    const text = cleanPrompt(req.prompt);
    const kind = sshPromptKind(text, req.mode);
    if (kind === 'notice') {
      this.o.log(opensshSays(this.o.host, text));
      return { answer: '' };
    }
    if (this.closed || this.refused) return { cancel: true };
    const max = this.o.maxPrompts ?? MAX_PROMPTS_PER_LOGIN;
    if (this.asked >= max) return this.refuse(kind, text, tooManyQuestions(max));
    this.asked++;
    this.o.log(askpassAsks(this.o.host, text));
    const answer = await this.o.ask({ host: this.o.host, text, secret: kind !== 'confirm', kind }, this.abort.signal);
    if (this.closed) return { cancel: true };
    if (answer === undefined) return this.refuse(kind, text, notAnswered());
    return { answer: answer.replace(/[\r\n]/g, '') };
  }

  private refuse(kind: SshPromptKind, text: string, why: string): AskpassReply {
    this.refused = { kind, text };
    this.o.log(askpassRefused(this.o.host, text, why));
    // Killed before the helper exits: OpenSSH would take its failure for an empty answer and go on.
    this.o.endLogin();
    return { cancel: true };
  }
}
