/**
 * The diagnostic a problem report carries, as Markdown: versions, each server's kind and recent
 * states, the effective settings and the last lines of the log. Pure; the caller redacts the
 * whole text (src/util/redact.ts) before anyone sees it. English whatever the display language, on
 * purpose: the report goes to the project's issue tracker, read by its maintainers.
 */
import type { ServerProfile } from '../config/config';
import type { StateStep } from './stateHistory';

export interface DiagnosticServer {
  readonly profile: ServerProfile;
  /** The state now, in the status bar's word ("not watched" when nothing follows it). */
  readonly state: string;
  /** The engine, when the server told it (SGLang, vLLM). */
  readonly engine?: string;
  readonly history: readonly StateStep[];
}

export interface DiagnosticInput {
  readonly extension: { readonly id: string; readonly version: string };
  readonly editor: { readonly app: string; readonly version: string; readonly remote: string | undefined };
  readonly platform: string;
  readonly servers: readonly DiagnosticServer[];
  /** Setting name → effective value. */
  readonly settings: Readonly<Record<string, unknown>>;
  readonly logLines: readonly string[];
  readonly now: number;
}

/** "systemd unit", "Docker container", "Docker compose service", "multi-node (2 nodes) …", "… on this machine". */
export function serverKind(profile: ServerProfile): string {
  const target = profile.docker
    ? profile.docker.kind === 'compose'
      ? 'Docker compose service'
      : 'Docker container'
    : 'systemd unit';
  const nodes = profile.nodes && profile.nodes.length > 1 ? `multi-node (${profile.nodes.length} nodes), ` : '';
  const where = profile.host === undefined ? 'on this machine' : 'over SSH';
  return `${nodes}${target}${profile.sudo ? ' with sudo' : ''}, ${where}`;
}

function fence(text: string): string {
  // A fence longer than any run of backticks inside, so a log line cannot close it.
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = '`'.repeat(longest + 1);
  return `${ticks}\n${text}\n${ticks}`;
}

function ago(now: number, at: number): string {
  const s = Math.max(0, Math.round((now - at) / 1000));
  return s < 120 ? `${s} s ago` : s < 7200 ? `${Math.round(s / 60)} min ago` : `${Math.round(s / 3600)} h ago`;
}

export function diagnosticReport(input: DiagnosticInput): string {
  const servers = input.servers.length
    ? input.servers.flatMap((s) => [
        `- **${s.profile.name}**: ${serverKind(s.profile)}; ${s.engine ?? 'engine not known yet'}; now ${s.state}`,
        ...s.history.map(
          (step) => `  - ${new Date(step.at).toISOString()} (${ago(input.now, step.at)}): ${step.state}`,
        ),
      ])
    : ['- none configured'];
  return [
    '## Diagnostic (Kimi Service)',
    '',
    `- Extension: ${input.extension.id} ${input.extension.version}`,
    `- Editor: ${input.editor.app} ${input.editor.version}${input.editor.remote ? `, remote ${input.editor.remote}` : ''}`,
    `- Platform: ${input.platform}`,
    '',
    '### Servers (state changes since the window opened)',
    '',
    ...servers,
    '',
    '### Effective settings',
    '',
    fence(JSON.stringify(input.settings, null, 2)),
    '',
    `### The last ${input.logLines.length} lines of the log`,
    '',
    fence(input.logLines.join('\n')),
    '',
  ].join('\n');
}
