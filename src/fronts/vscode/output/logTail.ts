import type * as vscode from 'vscode';
import type { LineTail } from '../../../util/lineTail';

const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error']);

/**
 * The output channel, every line written also kept in `tail` (a problem report carries the last
 * ones; VS Code gives no way to read a channel back). Lines at trace and debug level are kept
 * only when the channel shows them.
 */
export function tailedLog(channel: vscode.LogOutputChannel, tail: LineTail): vscode.LogOutputChannel {
  return new Proxy(channel, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (typeof property === 'string' && (LEVELS.has(property) || property === 'appendLine')) {
        return (message: unknown, ...rest: unknown[]) => {
          const shown = property !== 'trace' && property !== 'debug' ? true : target.logLevel <= levelOf(property);
          if (shown)
            tail.push(
              `${new Date().toISOString()} [${property === 'appendLine' ? 'info' : property}] ${String(message)}`,
            );
          return (value as (...args: unknown[]) => unknown).call(target, message, ...rest);
        };
      }
      return (value as (...args: unknown[]) => unknown).bind(target);
    },
  });
}

/** vscode.LogLevel's numbers (Trace 1, Debug 2), without importing vscode here. */
function levelOf(level: 'trace' | 'debug'): number {
  return level === 'trace' ? 1 : 2;
}
