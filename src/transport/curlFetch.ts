/**
 * HTTP to the SGLang server by running `curl` on the GPU host, for hosts whose SSH server
 * forbids TCP forwarding (`AllowTcpForwarding no`: ssh2's forwardOut is "administratively
 * prohibited"). Same `FetchLike` shape as node-fetch, so ServerHttpClient can switch to it.
 *
 * Headers (the Authorization header among them) and the body never reach curl's command line:
 * they go in a curl config read with `--config -`, from the command's stdin when the exec
 * function can write one, else from a here-document (see `CurlFetchOptions.stdin`).
 *
 * Pure parts: `isForwardingProhibited`, `curlConfig`, `curlCommand`, `parseCurlOutput`.
 */
import { Readable } from 'node:stream';
import { quote } from './shell';
import type { ExecOptions, ExecResult, Transport } from './transport';
import type { FetchLike, FetchResponse } from './fetchLike';
import { RemoteExitError, UnsafeArgumentError } from './errors';
import { curlFailed, noCurl } from '../present/words/transportWords';

const MARK_MISSING = 'KIMI_CURL_MISSING';
const MARK_STATUS = 'KIMI_CURL_STATUS';
const MARK_EXIT = 'KIMI_CURL_EXIT';
const HEREDOC_END = 'KIMI_CURL_CONFIG_END';
/** One argument of `sh -c` may not exceed 128 KiB on Linux (MAX_ARG_STRLEN). */
const MAX_COMMAND_CHARS = 120_000;

/**
 * True when an error says the SSH server refused a forwarding channel (RFC 4254 reason 1,
 * SSH_OPEN_ADMINISTRATIVELY_PROHIBITED). OpenSSH sends that reason with the description
 * "open failed" (serverloop.c), which ssh2 reports as "(SSH) Channel open failure: open
 * failed" with `reason: 1`; other servers spell it out. node-fetch keeps the message (and the
 * code) of the error it wraps.
 */
export function isForwardingProhibited(error: unknown): boolean {
  const e = error as { message?: unknown; reason?: unknown; code?: unknown } | null | undefined;
  if (e === null || e === undefined) return false;
  const message = typeof e.message === 'string' ? e.message : '';
  if (/administratively prohibited/i.test(message)) return true;
  if (/Channel open failure: open failed\s*$/i.test(message)) return true;
  if (e.reason === 1 && /Channel open failure/i.test(message)) return true;
  return e.code === 'EACCES' && /Channel open failure/i.test(message);
}

/** A string in curl's config syntax: double quotes, with `\\`, `\"`, `\t`, `\n`, `\r`, `\v` escaped. */
export function curlConfigString(s: string): string {
  if (s.includes('\0')) throw new UnsafeArgumentError('Cannot pass a NUL byte to curl');
  const escaped = s.replace(
    /[\\"\t\n\r\v]/g,
    (c) => ({ '\\': '\\\\', '"': '\\"', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\v': '\\v' })[c] ?? c,
  );
  return `"${escaped}"`;
}

/** The secret-bearing part of the request: one `header = "..."` per header, and the body as `data-raw`. */
export function curlConfig(headers: Readonly<Record<string, string>>, body?: string): string {
  const lines = Object.entries(headers).map(([name, value]) => {
    if (/[\r\n:]/.test(name) || /[\r\n]/.test(value))
      throw new UnsafeArgumentError(`Invalid HTTP header ${JSON.stringify(name)}`);
    return `header = ${curlConfigString(`${name}: ${value}`)}`;
  });
  // data-raw: a body that starts with "@" is text, not a file name.
  if (body !== undefined) lines.push(`data-raw = ${curlConfigString(body)}`);
  return lines.map((l) => l + '\n').join('');
}

export interface CurlRequest {
  readonly url: string;
  readonly method: string;
  readonly maxTimeSeconds: number;
  /** Bytes of body to keep: one more is read so a longer body shows as cut off. */
  readonly maxBodyBytes: number;
  /** The config in a here-document; undefined when curl reads it from the command's stdin. */
  readonly inlineConfig?: string;
}

/**
 * The remote command. Every value is quoted by `quote`; the exit status of curl and the HTTP
 * status line come back on stderr (`-w '%{stderr}...'`, curl >= 7.63), the body on stdout,
 * cut by `head -c` on the host so a huge answer never crosses the SSH connection.
 */
export function curlCommand(r: CurlRequest): string {
  if (!/^https?:\/\//i.test(r.url)) throw new UnsafeArgumentError(`Not an http(s) URL: ${r.url}`);
  if (!/^[A-Z]+$/.test(r.method)) throw new UnsafeArgumentError(`Invalid HTTP method: ${r.method}`);
  const argv = [
    'curl',
    '-q', // first: no ~/.curlrc
    '-sS',
    '--max-time',
    String(Math.max(1, Math.ceil(r.maxTimeSeconds))),
    '-X',
    r.method,
    '-w',
    `%{stderr}\\n${MARK_STATUS} %{http_code} %{content_type}\\n`,
    '--config',
    '-',
    r.url,
  ];
  const curl = argv.map(quote).join(' ');
  const feed =
    r.inlineConfig === undefined
      ? ''
      : ` <<'${HEREDOC_END}'\n${r.inlineConfig}${r.inlineConfig.endsWith('\n') || r.inlineConfig === '' ? '' : '\n'}${HEREDOC_END}`;
  const command = [
    `command -v curl >/dev/null 2>&1 || { echo ${MARK_MISSING} >&2; exit 127; }`,
    `{ ${curl}${feed}`,
    `echo "${MARK_EXIT} $?" >&2; } | head -c ${Math.floor(r.maxBodyBytes) + 1}`,
  ].join('\n');
  if (command.length > MAX_COMMAND_CHARS)
    throw new UnsafeArgumentError(`request too large for curl on the host (${command.length} characters)`);
  return command;
}

export type CurlOutcome =
  | { readonly kind: 'response'; readonly status: number; readonly contentType: string; readonly body: string }
  | { readonly kind: 'no-curl' }
  | {
      readonly kind: 'failed';
      readonly message: string;
      readonly code?: 'ECONNREFUSED' | 'ETIMEDOUT' | 'EHOSTUNREACH';
    };

/** What the remote command's output means. */
export function parseCurlOutput(result: ExecResult): CurlOutcome {
  const lines = result.stderr.split('\n').map((l) => l.trim());
  if (lines.includes(MARK_MISSING)) return { kind: 'no-curl' };
  const exitLine = lines.find((l) => l.startsWith(`${MARK_EXIT} `));
  const exit = exitLine !== undefined ? Number(exitLine.slice(MARK_EXIT.length + 1)) : result.code;
  const statusLine = /^KIMI_CURL_STATUS (\d{3}) ?(.*)$/.exec(lines.find((l) => l.startsWith(`${MARK_STATUS} `)) ?? '');
  const status = statusLine ? Number(statusLine[1]) : 0;
  const said = lines
    .filter((l) => l !== '' && !l.startsWith('KIMI_CURL_') && l !== '[kimi: stdout truncated]')
    .join(' ');
  // 23 (write error) / 141 (SIGPIPE): `head -c` stopped reading a body longer than the cap.
  if (status > 0 && (exit === 0 || exit === 23 || exit === 141)) {
    return { kind: 'response', status, contentType: statusLine?.[2] ?? '', body: result.stdout };
  }
  const curl = curlFailed({ kind: 'curl', said, exit: exit ?? 'unknown' });
  if (exit === 7) {
    if (/no route|unreachable/i.test(said)) return { kind: 'failed', message: curl, code: 'EHOSTUNREACH' };
    return { kind: 'failed', message: curl, code: 'ECONNREFUSED' };
  }
  if (exit === 28) return { kind: 'failed', message: curl, code: 'ETIMEDOUT' };
  if (exitLine === undefined)
    return {
      kind: 'failed',
      message: curlFailed({ kind: 'command', said, exit: result.code ?? result.signal ?? 'unknown' }),
    };
  return { kind: 'failed', message: curlFailed({ kind: 'exit', said, exit: String(exit) }) };
}

/** A response in node-fetch's shape, or the error node-fetch would have thrown. */
export function toFetchResponse(outcome: CurlOutcome): FetchResponse {
  if (outcome.kind === 'no-curl') throw new RemoteExitError(noCurl());
  if (outcome.kind === 'failed') throw new RemoteExitError(outcome.message, outcome.code);
  const { status, contentType, body } = outcome;
  return {
    status,
    headers: {
      get: (name: string) => (name.toLowerCase() === 'content-type' && contentType !== '' ? contentType : null),
    },
    body: Readable.from([Buffer.from(body, 'utf8')]),
  };
}

/** Runs a quoted command on the GPU host; `stdin` is written to it and closed (only when `CurlFetchOptions.stdin`). */
export type CurlExec = (command: string, options: ExecOptions & { readonly stdin?: string }) => Promise<ExecResult>;

export interface CurlFetchOptions {
  /**
   * True when `exec` honours `stdin`: the config (Authorization header, body) then never
   * appears in the host's process list. False (today's Transport.exec has no stdin): it goes in
   * a here-document, which is part of the `sh -c` command line until the shell has started curl.
   */
  readonly stdin?: boolean;
  /** Used when the caller gives no `timeoutMs` in the request. */
  readonly timeoutMs?: number;
  /** Used when the caller gives no `maxBodyBytes` in the request. */
  readonly maxBodyBytes?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** Extra time for ssh and the shell beyond curl's own --max-time. */
const EXEC_GRACE_MS = 5_000;

/** A `FetchLike` that runs curl on the GPU host. */
export function curlFetch(exec: CurlExec, options: CurlFetchOptions = {}): FetchLike {
  return async (url, init) => {
    const timeoutMs = init.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const maxBodyBytes = init.maxBodyBytes ?? options.maxBodyBytes ?? 1024 * 1024;
    const config = curlConfig(init.headers ?? {}, init.body);
    const command = curlCommand({
      url,
      method: init.method.toUpperCase(),
      maxTimeSeconds: timeoutMs / 1000,
      maxBodyBytes,
      ...(options.stdin ? {} : { inlineConfig: config }),
    });
    const result = await exec(command, {
      timeoutMs: timeoutMs + EXEC_GRACE_MS,
      signal: init.signal,
      maxOutputBytes: maxBodyBytes + 1 + 64 * 1024,
      ...(options.stdin ? { stdin: config } : {}),
    });
    return toFetchResponse(parseCurlOutput(result));
  };
}

/**
 * The fallback for a session: `new ServerHttpClient(url, agent, undefined, { fallbackFetch: curlFetchVia(transport), onFallback: log })`.
 * Transport.exec has no stdin today, so the config goes in a here-document (`stdin: false`).
 */
export function curlFetchVia(transport: Pick<Transport, 'exec'>, options: CurlFetchOptions = {}): FetchLike {
  return curlFetch((command, execOptions) => transport.exec(command, execOptions), options);
}
