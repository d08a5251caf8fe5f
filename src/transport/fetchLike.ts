/** The fetch shape the HTTP clients use: node-fetch through the tunnel, or curl on the host (curlFetch.ts). */
import type * as http from 'node:http';

/** The slice of node-fetch's Response the client uses. */
export interface FetchResponse {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  readonly body: NodeJS.ReadableStream | null;
}
export type FetchLike = (
  url: string,
  init: {
    method: string;
    headers?: Record<string, string>;
    body?: string;
    agent?: http.Agent;
    signal: AbortSignal;
    /** Hints for fetches that run elsewhere (curl on the host); node-fetch ignores them. */
    timeoutMs?: number;
    maxBodyBytes?: number;
  },
) => Promise<FetchResponse>;
