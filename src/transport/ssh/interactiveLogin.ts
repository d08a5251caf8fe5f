/**
 * One hop's keyboard-interactive and password logins on ssh2 (its `keyboard-interactive` auth
 * method with a prompt function, and `password`): the questions go to the front
 * (SshTransportOptions.requestLogin) with the handshake deadline paused; the rules are in
 * loginPolicy.ts. Answers are never logged.
 */
import type { AnyAuthMethod, AuthenticationType, KeyboardInteractiveCallback, Prompt } from 'ssh2';
import type { HandshakeDeadline } from './handshake';
import {
  MAX_QUESTIONS_PER_ROUND,
  askerName,
  cleanServerText,
  loginPrompts,
  nextLogin,
  noAnswerRefusal,
  passwordQuestion,
  refusedRefusal,
  type HopLoginState,
  type LoginAnswer,
  type LoginQuestion,
} from './loginPolicy';
import type { SshEndpoint } from './sshTargetTypes';
import type { DialContext } from './sshOptions';
import { TransportError } from '../transport';
import { AuthError } from '../errors';
import { tooManyQuestions } from '../../present/words/sshWords';
import { defaultNoLoginHint } from '../../present/words/loginWords';
import { loginRound, serverAsks } from '../../present/words/connectionWords';

interface Round {
  readonly method: 'keyboard-interactive' | 'password';
  /** The last question the user answered in this round. */
  question?: LoginQuestion;
  readonly answers: LoginAnswer[];
  asked: number;
}

export class HopLogin {
  private readonly state: HopLoginState = { keyboardInteractiveTried: false, passwordTried: false };
  private round: Round | undefined;
  /** Aborted when the attempt ends while a question is with the user. */
  private open: AbortController | undefined;
  private readonly base: Omit<LoginQuestion, 'method' | 'name' | 'instructions' | 'prompts'>;

  constructor(
    private readonly ctx: DialContext,
    private readonly ep: SshEndpoint,
    private readonly deadline: HandshakeDeadline,
    /** Ends the handshake with this error (a cancelled question: nothing is sent). */
    private readonly abort: (err: TransportError) => void,
    private readonly isOver: () => boolean,
  ) {
    const target = ctx.options.target;
    this.base = {
      host: `${ep.username}@${ep.hostName}:${ep.port}`,
      alias: ep.alias,
      ...(ep !== target ? { jumpFor: target.alias } : {}),
    };
  }

  /** A question is with the user now. */
  get asking(): boolean {
    return this.open !== undefined;
  }

  /** The attempt ended: a question still open is withdrawn (its answer would go nowhere). */
  close(): void {
    this.open?.abort();
    this.open = undefined;
  }

  /** The refusal that replaces ssh2's generic authentication failure, when a round was refused. */
  get refusal(): string | undefined {
    return this.state.refusal;
  }

  /**
   * The server's verdict on the round in progress: `accepted` on success (or a partial success:
   * more methods needed), else refused, with the methods it still allows.
   */
  settle(accepted: boolean, methodsLeft: readonly AuthenticationType[] | null = null): void {
    const round = this.round;
    if (!round) return;
    this.round = undefined;
    for (const a of round.answers) a.settled?.(accepted);
    this.ctx.log(loginRound(this.ep.alias, round.method, accepted));
    if (!accepted && round.question) this.state.refusal = refusedRefusal(round.question, methodsLeft);
  }

  /** The next login method to offer after the keys, or false to end (with `refusal` when there is one). */
  async next(methodsLeft: readonly AuthenticationType[] | null, tried: string[]): Promise<AnyAuthMethod | false> {
    const ask = this.ctx.options.requestLogin;
    const decision = nextLogin(
      this.state,
      methodsLeft,
      ask !== undefined,
      this.base.host,
      this.ctx.options.noLoginHint ?? defaultNoLoginHint(),
    );
    const username = this.ep.username;
    switch (decision.kind) {
      case 'end':
        if (decision.refusal !== undefined) this.state.refusal = decision.refusal;
        if (decision.note !== undefined) tried.push(decision.note);
        return false;
      case 'keyboard-interactive': {
        this.state.keyboardInteractiveTried = true;
        this.round = { method: 'keyboard-interactive', answers: [], asked: 0 };
        tried.push('keyboard-interactive');
        const prompt = (
          name: string,
          instructions: string,
          _lang: string,
          prompts: Prompt[],
          finish: KeyboardInteractiveCallback,
        ) => void this.answer(name, instructions, prompts, finish);
        return { type: 'keyboard-interactive', username, prompt };
      }
      case 'password': {
        this.state.passwordTried = true;
        const question = passwordQuestion(this.base);
        const answer = await this.ask(question);
        if (answer === undefined) return false;
        this.round = { method: 'password', question, answers: [answer], asked: 1 };
        tried.push('password');
        return { type: 'password', username, password: answer.answers[0] ?? '' };
      }
    }
  }

  /** One keyboard-interactive question (ssh2 answers empty ones by itself). */
  private async answer(
    name: string,
    instructions: string,
    prompts: Prompt[],
    finish: KeyboardInteractiveCallback,
  ): Promise<void> {
    const round = this.round;
    if (!round || this.isOver()) return;
    const question: LoginQuestion = {
      ...this.base,
      method: 'keyboard-interactive',
      name: cleanServerText(name),
      instructions: cleanServerText(instructions),
      prompts: loginPrompts(prompts),
    };
    if (++round.asked > MAX_QUESTIONS_PER_ROUND) {
      this.abort(new AuthError(tooManyQuestions(askerName(question), MAX_QUESTIONS_PER_ROUND)));
      return;
    }
    const answer = await this.ask(question);
    if (answer === undefined || this.isOver()) return;
    round.question = question;
    round.answers.push(answer);
    finish([...answer.answers]);
  }

  /** Asks the front with the deadline paused; a cancelled or malformed answer ends the handshake. */
  private async ask(question: LoginQuestion): Promise<LoginAnswer | undefined> {
    this.ctx.log(
      serverAsks(
        this.ep.alias,
        question.method,
        question.prompts.map((p) => p.text),
      ),
    );
    this.deadline.pause();
    const open = new AbortController();
    this.open = open;
    let answer: LoginAnswer | undefined;
    try {
      answer = await this.ctx.options.requestLogin!(question, open.signal);
    } catch {
      answer = undefined;
    } finally {
      if (this.open === open) this.open = undefined;
      this.deadline.resume();
    }
    if (this.isOver()) return undefined;
    if (answer === undefined || answer.answers.length !== question.prompts.length) {
      this.abort(new AuthError(noAnswerRefusal(question)));
      return undefined;
    }
    return answer;
  }
}
