import type * as vscode from 'vscode';
import { shownText } from './shownText';

const WRITERS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'append', 'appendLine', 'replace']);

/**
 * The output channel with every written line masked (API keys, Authorization headers, *_TOKEN=
 * values, and the literal keys in `known`), so no code path can log a secret by mistake; the core's
 * hints in VS Code's words.
 */
export function maskedLog(channel: vscode.LogOutputChannel, known: ReadonlySet<string>): vscode.LogOutputChannel {
  return new Proxy(channel, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (typeof property === 'string' && WRITERS.has(property)) {
        return (message: unknown, ...rest: unknown[]) =>
          (value as (...args: unknown[]) => unknown).call(
            target,
            typeof message === 'string' ? shownText(message, [...known]) : message,
            ...rest,
          );
      }
      return (value as (...args: unknown[]) => unknown).bind(target);
    },
  });
}
