/**
 * The MCP server's pure parts: its command line, the progress pacing of kimi_wait, the tools'
 * input schemas, and the client configuration (`.mcp.json`) the "Copy MCP configuration"
 * command writes.
 */
import { HOST_KEY_REFUSED_HINT, hostKeyText } from '../../src/fronts/mcp/front';
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { parseMcpArgs } from '../../src/fronts/mcp/args';
import {
  claudeMcpAddCommand,
  mcpConfigText,
  mcpServerEntry,
  mergeMcpConfig,
  userSettingsArgs,
} from '../../src/fronts/mcp/clientConfig';
import { ProgressPacer, progressKey } from '../../src/fronts/mcp/progress';
import {
  DESCRIPTIONS,
  logsInput,
  MCP_DESCRIPTIONS,
  restartInput,
  STATES_EXPLAINED,
  statusInput,
  waitInput,
} from '../../src/agent/definition';
import type { ServerReport } from '../../src/present/report';
import { toolResult } from '../../src/fronts/mcp/tools';

function report(over: Partial<ServerReport> = {}): ServerReport {
  return {
    server: 'gpu7',
    host: 'gpu7',
    unit: 'sglang-k26-ddtree',
    state: 'loading',
    watching: true,
    phase: 'loading weights',
    activity: null,
    stall: null,
    progressPercent: 10,
    etaSeconds: 300,
    since: null,
    confirmedAt: null,
    lastError: null,
    parsers: null,
    url: 'http://gpu7:30001',
    summary: 'gpu7: loading 10% (loading weights) · about 5 min',
    ...over,
  };
}

describe('mcp: command line', () => {
  it('reads --config and --settings, with a space or =', () => {
    assert.deepEqual(parseMcpArgs(['--config', 'a.json', '--settings=b.json']), {
      ok: true,
      args: { configFile: 'a.json', settingsFile: 'b.json' },
    });
    assert.deepEqual(parseMcpArgs([]), { ok: true, args: {} });
    assert.deepEqual(parseMcpArgs(['--help']), { ok: true, args: { help: true } });
  });
  it('refuses a missing file name and unknown arguments, naming them', () => {
    const missing = parseMcpArgs(['--config']);
    assert.ok(!missing.ok && /--config needs a file name/.test(missing.error));
    const flagAsValue = parseMcpArgs(['--config', '--settings', 'x']);
    assert.ok(!flagAsValue.ok && /--config needs a file name/.test(flagAsValue.error));
    const unknown = parseMcpArgs(['--host', 'gpu7']);
    assert.ok(!unknown.ok && /unknown argument "--host"/.test(unknown.error));
  });
});

describe('mcp: progress pacing of kimi_wait', () => {
  it('tells every change at once, and nothing more while nothing changes within the heartbeat', () => {
    const pacer = new ProgressPacer(5000);
    const a = pacer.onChange(report(), 0);
    assert.deepEqual(a, { progress: 10, total: 100, message: 'gpu7: loading 10% (loading weights) · about 5 min' });
    // the same state again (only the ETA text moved): not a change
    assert.equal(
      pacer.onChange(report({ summary: 'gpu7: loading 10% (loading weights) · about 4 min' }), 100),
      undefined,
    );
    assert.equal(pacer.onTick(report(), 4999), undefined);
    const b = pacer.onChange(report({ progressPercent: 11, summary: 'gpu7: loading 11%' }), 5000);
    assert.equal(b?.progress, 11);
    const c = pacer.onChange(
      report({ state: 'warming up', phase: 'warming up', progressPercent: 97, summary: 'gpu7: warming up 97%' }),
      5001,
    );
    assert.equal(c?.progress, 97);
    const d = pacer.onChange(
      report({ state: 'ready', phase: 'ready', progressPercent: null, summary: 'gpu7: ready' }),
      5002,
    );
    assert.deepEqual(d, { progress: 100, total: 100, message: 'gpu7: ready' });
  });

  it('sends a heartbeat when nothing changed for the heartbeat period, with a progress that still increases', () => {
    const pacer = new ProgressPacer(5000);
    const sent = [pacer.onChange(report({ progressPercent: 40 }), 0)];
    for (let t = 1000; t <= 30_000; t += 1000) {
      const u = pacer.onTick(report({ progressPercent: 40 }), t);
      if (u) sent.push(u);
    }
    assert.equal(sent.length, 7, 'at 0, 5, 10, ..., 30 s');
    const progress = sent.map((u) => u!.progress);
    for (let i = 1; i < progress.length; i++) assert.ok(progress[i]! > progress[i - 1]!, `not increasing: ${progress}`);
    assert.ok(
      progress.every((p) => p >= 40 && p < 41),
      `progress stays at the percentage: ${progress}`,
    );
  });

  it('keeps increasing when the percentage is unknown or goes back (a new run after a crash)', () => {
    const pacer = new ProgressPacer(5000);
    const first = pacer.onChange(report({ state: 'stopping', phase: null, progressPercent: null }), 0)!;
    assert.equal(first.progress, 0);
    const second = pacer.onChange(report({ state: 'restarting', phase: null, progressPercent: null }), 1)!;
    assert.ok(second.progress > first.progress);
    pacer.onChange(report({ progressPercent: 60 }), 2);
    const back = pacer.onChange(report({ progressPercent: 3, summary: 'gpu7: loading 3%' }), 3)!;
    assert.ok(back.progress > 60, 'progress never decreases');
    assert.equal(back.message, 'gpu7: loading 3%', 'the message says the truth');
  });

  it('a change of error or parser verification counts as a change', () => {
    assert.notEqual(progressKey(report()), progressKey(report({ lastError: 'completion probe: 500' })));
    assert.notEqual(progressKey(report()), progressKey(report({ parsers: 'Parsers verified: 6/6 checks passed' })));
    assert.equal(progressKey(report()), progressKey(report({ etaSeconds: 12, summary: 'other' })));
  });
});

describe('mcp: tool input schemas', () => {
  const message = (r: { success: boolean; error?: { issues: { message: string; path: PropertyKey[] }[] } }) =>
    r.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') ?? '';

  it('applies the defaults: timeoutSeconds 90, lines 50', () => {
    assert.deepEqual(waitInput.parse({}), { timeoutSeconds: 90 });
    assert.deepEqual(logsInput.parse({ server: 'gpu7' }), { server: 'gpu7', lines: 50 });
    assert.deepEqual(restartInput.parse({ force: true }), { force: true });
    assert.deepEqual(statusInput.parse({}), {});
  });

  it('refuses bad inputs with a message that says what is wrong', () => {
    assert.match(
      message(waitInput.safeParse({ timeoutSeconds: 600 })),
      /timeoutSeconds: timeoutSeconds must be at most 300: call kimi_wait again/,
    );
    assert.match(message(waitInput.safeParse({ timeoutSeconds: 0 })), /at least 1/);
    assert.match(message(waitInput.safeParse({ timeoutSeconds: '90' })), /timeoutSeconds must be a number of seconds/);
    assert.match(message(restartInput.safeParse({ force: 'yes' })), /force must be true or false/);
    assert.match(message(logsInput.safeParse({ lines: 2.5 })), /lines must be a whole number/);
    assert.match(message(logsInput.safeParse({ lines: 5000 })), /at most 1000/);
    assert.match(message(statusInput.safeParse({ server: '' })), /server must be a server name/);
    assert.match(
      message(waitInput.safeParse({ timeout: 60 })),
      /timeout/,
      'an unknown key is named (not silently ignored)',
    );
  });

  it('descriptions tell a model when to call which and what the states mean, the states once', () => {
    for (const word of [
      'ready',
      'loading NN%',
      'warming up',
      'failed',
      'unreachable',
      'unhealthy',
      'stopping',
      'restarting',
      'not watched',
    ])
      assert.ok(DESCRIPTIONS.kimi_status.includes(`"${word}"`), `kimi_status does not explain ${word}`);
    assert.deepEqual(
      Object.entries(DESCRIPTIONS)
        .filter(([, text]) => text.includes(STATES_EXPLAINED) || /"loading NN%"|"unreachable"/.test(text))
        .map(([name]) => name),
      ['kimi_status'],
      'the states are explained in one description',
    );
    assert.match(DESCRIPTIONS.kimi_wait, /call kimi_wait AGAIN, do NOT restart/);
    assert.match(DESCRIPTIONS.kimi_restart, /watches that load instead and says so/);
  });

  it('the five descriptions cost an agent request under 2,500 characters (they go with every request)', () => {
    const total = (d: Record<string, string>) => Object.values(d).reduce((n, text) => n + text.length, 0);
    assert.ok(total(DESCRIPTIONS) < 2_500, `${total(DESCRIPTIONS)} characters`);
    // MCP's kimi_restart also says how this server asks for the confirmation.
    assert.ok(total(MCP_DESCRIPTIONS) < 2_700, `${total(MCP_DESCRIPTIONS)} characters over MCP`);
    for (const [name, text] of Object.entries(DESCRIPTIONS)) assert.ok(text.length >= 200, `${name} says enough`);
  });
});

describe('mcp: client configuration (.mcp.json)', () => {
  const entry = mcpServerEntry('/home/me/.vscode/extensions/kimi-tools.kimi-service-0.1.0/dist/mcp.js');

  it('is the mcpServers entry Claude Code and Cursor read', () => {
    assert.deepEqual(JSON.parse(mcpConfigText(entry)), {
      mcpServers: {
        kimi: { command: 'node', args: ['/home/me/.vscode/extensions/kimi-tools.kimi-service-0.1.0/dist/mcp.js'] },
      },
    });
    assert.equal(
      claudeMcpAddCommand(entry),
      'claude mcp add kimi -- node /home/me/.vscode/extensions/kimi-tools.kimi-service-0.1.0/dist/mcp.js',
    );
    assert.equal(
      claudeMcpAddCommand(mcpServerEntry("/Users/a b/it's/mcp.js")),
      `claude mcp add kimi -- node '/Users/a b/it'\\''s/mcp.js'`,
    );
  });

  it('creates the file when there is none', () => {
    const merged = mergeMcpConfig(undefined, entry);
    assert.ok(merged.ok);
    assert.equal(merged.replaced, false);
    assert.deepEqual(JSON.parse(merged.text), JSON.parse(mcpConfigText(entry)));
  });

  it('keeps the other servers and keys, and replaces an older kimi entry', () => {
    const existing = JSON.stringify(
      {
        mcpServers: {
          github: { command: 'npx', args: ['-y', 'gh-mcp'], env: { T: 'x' } },
          kimi: { command: 'node', args: ['/old/dist/mcp.js'] },
        },
        other: 1,
      },
      null,
      4,
    );
    const merged = mergeMcpConfig(existing, entry);
    assert.ok(merged.ok);
    assert.equal(merged.replaced, true);
    const value = JSON.parse(merged.text);
    assert.deepEqual(value.mcpServers.github, { command: 'npx', args: ['-y', 'gh-mcp'], env: { T: 'x' } });
    assert.deepEqual(value.mcpServers.kimi, { command: 'node', args: [entry.args[0]] });
    assert.equal(value.other, 1);
    assert.ok(merged.text.startsWith('{\n    "mcpServers"'), 'the indentation of the file is kept');
    const crlf = mergeMcpConfig('{\r\n  "mcpServers": {}\r\n}\r\n', entry);
    assert.ok(crlf.ok && !/[^\r]\n/.test(crlf.text), 'CRLF kept');
    const noServers = mergeMcpConfig('{"x": true}', entry);
    assert.ok(noServers.ok && JSON.parse(noServers.text).x === true && JSON.parse(noServers.text).mcpServers.kimi);
  });

  it('refuses to overwrite a file it cannot read as a JSON object', () => {
    for (const [text, error] of [
      ['{"mcpServers": {', /not valid JSON/],
      ['[1, 2]', /not a JSON object/],
      ['{"mcpServers": []}', /"mcpServers" is not an object/],
    ] as const) {
      const merged = mergeMcpConfig(text, entry);
      assert.ok(!merged.ok, text);
      assert.match(merged.error, error);
    }
  });

  it('adds --settings only for a VS Code whose user folder is not Code/User', () => {
    const exists = () => true;
    assert.deepEqual(
      userSettingsArgs('/home/me/.config/Code/User/globalStorage/kimi-tools.kimi-service', exists, path.posix),
      [],
    );
    assert.deepEqual(
      userSettingsArgs(
        '/home/me/.local/share/code-server/User/globalStorage/kimi-tools.kimi-service',
        exists,
        path.posix,
      ),
      ['--settings', '/home/me/.local/share/code-server/User/settings.json'],
    );
    assert.deepEqual(
      userSettingsArgs('/home/me/.config/Code - Insiders/User/globalStorage/x', () => false, path.posix),
      [],
      'no such settings.json',
    );
    assert.deepEqual(
      userSettingsArgs('C:\\Users\\me\\AppData\\Roaming\\Code\\User\\globalStorage\\x', exists, path.win32),
      [],
    );
    assert.deepEqual(userSettingsArgs(undefined, exists, path.posix), []);
  });
});

describe('mcp: results', () => {
  it('a result is the text a model reads, then the same facts as JSON (text block and structuredContent)', () => {
    const r = toolResult({ text: 'gpu7: ready', json: { state: 'ready' }, isError: false });
    assert.deepEqual(r.content, [
      { type: 'text', text: 'gpu7: ready' },
      { type: 'text', text: '{"state":"ready"}' },
    ]);
    assert.deepEqual(r.structuredContent, { state: 'ready' });
    assert.equal(r.isError, undefined);
    assert.equal(toolResult({ text: 'x', json: {}, isError: true }).isError, true);
  });
});

describe('mcp: host keys said clearly', () => {
  it('"ask" is said to act as "strict" (nobody can be asked), with what to do', () => {
    assert.match(hostKeyText('ask'), /"ask" acts as "strict" in the MCP server \(nobody can be asked\)/);
    assert.match(hostKeyText('ask'), /known-hosts file first/);
    assert.match(hostKeyText('strict'), /unknown host key is refused/);
    assert.match(hostKeyText('accept-new'), /unknown host key is added/);
    assert.match(HOST_KEY_REFUSED_HINT, /"ask" acts as "strict" here/);
  });
});
