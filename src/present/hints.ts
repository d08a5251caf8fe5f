/**
 * What a user must do about a refusal, in the words of the front they use: VS Code names its
 * palette commands, the CLI (and MCP, whose user has the CLI at hand) names what works there.
 * The core's messages carry the VS Code words (the default front); `forFront` turns each one
 * into the front's own. Kinds: TargetError 'sudo-refused' (target/target.ts) and the 401 of a
 * server that wants an API key (engine/httpAnswers.ts).
 */

export type Front = 'vscode' | 'lm' | 'mcp' | 'cli';
export type HintKind = 'sudo-refused' | 'api-key-missing';

/** The phrases a core message holds for each kind (VS Code's, word for word). */
const CORE_PHRASES: Record<HintKind, ReadonlyArray<readonly [core: string, outside: string]>> = {
  'sudo-refused': [
    [
      `"Kimi Service: Copy sudoers rule" copies the sudoers rules that allow exactly the extension's commands`,
      `docs/least-privilege.md gives the sudoers rules that allow exactly these commands`,
    ],
    [`install the rules of "Kimi Service: Copy sudoers rule"`, `install the sudoers rules of docs/least-privilege.md`],
  ],
  'api-key-missing': [[`set it with "Kimi Service: Set server API key"`, `set it in KIMI_API_KEY for kimi-service`]],
};

/** A core message as the front's user reads it: VS Code's palette commands replaced outside VS Code. */
export function forFront(text: string, front: Front): string {
  if (front === 'vscode' || front === 'lm' || !text.includes('"Kimi Service: ')) return text;
  let out = text;
  for (const phrases of Object.values(CORE_PHRASES))
    for (const [core, outside] of phrases) {
      out = out.split(core).join(outside);
      // The same words inside a JSON line (`--json`): their quotes escaped.
      out = out.split(JSON.stringify(core).slice(1, -1)).join(JSON.stringify(outside).slice(1, -1));
    }
  return out;
}

/** `forFront` on every string of a JSON value (a tool's structured result). */
export function forFrontDeep<T>(value: T, front: Front): T {
  if (typeof value === 'string') return forFront(value, front) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => forFrontDeep(v, front)) as T;
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, forFrontDeep(v, front)])) as T;
  return value;
}
