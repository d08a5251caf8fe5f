/**
 * The agent tools defined once (src/agent): package.json's languageModelTools and MCP's
 * tools/list both come from that definition, and the language-model tools run the same verbs
 * as the MCP server (the restart waits until the host has it; verify refuses a server that is
 * not ready, in the same words). Against a stand-in fleet: what the tools do with its answers.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ElicitRequestSchema,
  type CallToolResult,
  type ElicitRequest,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import {
  DESCRIPTIONS,
  MCP_DESCRIPTIONS,
  MCP_FACES,
  MCP_INPUTS,
  parseToolInput,
  TOOL_NAMES,
} from '../../src/agent/definition';
import { TOOL_WAIT_MAX_SECONDS } from '../../src/agent/limits';
import { inputJsonSchema, languageModelToolTexts, languageModelTools } from '../../src/agent/lmContribution';
import { AgentTools, ToolRefusal } from '../../src/agent/run';
import { parseSettings } from '../../src/config/parseSettings';
import type { ServerProfile, Settings } from '../../src/config/config';
import type { SettingsSource } from '../../src/config/settingsSource';
import { Fleet } from '../../src/fleet/fleet';
import type { FleetEvent, FleetSession, ServerSnapshot } from '../../src/fleet/fleetTypes';
import { Verifications } from '../../src/fleet/checks/verifications';
import { resolveServer } from '../../src/fleet/servers/resolveServer';
import { lmAgent } from '../../src/fronts/lm/toolHost';
import { confirmWay } from '../../src/fronts/mcp/confirm';
import { registerKimiTools } from '../../src/fronts/mcp/tools';
import { waitFor } from '../util/waitFor';
import { initialState } from '../../src/monitor/state/loadState';
import type { LoadState } from '../../src/monitor/state/loadStateTypes';
import { serverChoiceText } from '../../src/present/serverRefusalText';

const ROOT = path.join(__dirname, '..', '..');

function settingsOf(raw: Record<string, unknown> = {}): Settings {
  const parsed = parseSettings({
    servers: [
      { name: 'a', host: 'gpu1', unit: 'u1' },
      { name: 'b', host: 'gpu2', unit: 'u2' },
    ],
    ...raw,
  });
  assert.ok(parsed.ok, JSON.stringify(parsed));
  return parsed.settings;
}

const source = (settings: Settings): SettingsSource => ({
  read: () => ({ ok: true, settings, source: 'kimiService.servers' }),
});

/** A fleet stand-in: snapshots it is told, a restart the host confirms when the test says so. */
class FakeFleet {
  private readonly listeners = new Set<(event: FleetEvent) => void>();
  states = new Map<string, LoadState | undefined>();
  watching = false;
  loading = false;
  restarts = 0;
  verifications = 0;

  constructor(readonly settings: Settings) {}

  get servers(): readonly ServerProfile[] {
    return this.settings.servers;
  }
  server(name: string) {
    return this.servers.find((s) => s.name === name);
  }
  snapshot(server: ServerProfile): ServerSnapshot {
    const state = this.states.get(server.name);
    return {
      server,
      state,
      watching: this.watching,
      loading: this.loading,
      refusal: undefined,
      verification: undefined,
    } as ServerSnapshot;
  }
  onEvent(listener: (event: FleetEvent) => void) {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }
  set(server: ServerProfile, state: LoadState): void {
    const previous = this.states.get(server.name) ?? state;
    this.states.set(server.name, state);
    for (const l of [...this.listeners]) l({ type: 'state', server, state, previous });
  }
  async connect() {
    return {};
  }
  async forecast() {
    return { text: '~9 min', warning: undefined };
  }
  /** As Fleet.restart: it answers once the host has the restart, or after `issueTimeoutMs` without it. */
  async restart(server: ServerProfile, options: { issueTimeoutMs?: number } = {}) {
    this.restarts++;
    this.watching = true;
    this.set(server, { ...initialState(Date.now()), restartRequestedAt: Date.now() });
    const issued = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => done(false), options.issueTimeoutMs ?? 60_000);
      const subscription = this.onEvent((event) => {
        if (event.type === 'state' && event.state.confirmedAt !== undefined) done(true);
      });
      function done(value: boolean): void {
        clearTimeout(timer);
        subscription.dispose();
        resolve(value);
      }
    });
    return {
      kind: 'restarted' as const,
      outcome: new Promise<undefined>(() => undefined),
      issued,
      snapshot: this.snapshot(server),
    };
  }
  /** The host has the restart: the unit was seen again after `systemctl restart` returned. */
  confirm(server: ServerProfile): void {
    const state = this.states.get(server.name)!;
    this.set(server, { ...state, confirmedAt: Date.now() });
  }
  /**
   * Fleet.verifyParsers' own verb (Verifications.verify), its gate included (no copy of it here), on this stand-in's
   * connection and look: a server not ready is refused with its NotReadyError; past the gate the
   * checks start on a session that cannot be used, their end is announced (a `verified` event),
   * and a run is counted.
   */
  async verifyParsers(server: ServerProfile) {
    const unusable = new Proxy(
      {},
      {
        get: () => {
          throw new Error('the stand-in session cannot be used');
        },
      },
    );
    let checksRan = false;
    const host = {
      connect: async () => ({ transport: unusable, client: unusable }) as unknown as FleetSession,
      status: async () => this.snapshot(server),
      fire: (event: FleetEvent) => {
        if (event.type === 'verified') checksRan = true;
      },
    };
    try {
      await new Verifications().verify(host, server, () => undefined);
    } catch (error) {
      if (!checksRan) throw error;
    }
    assert.ok(checksRan, 'Verifications.verify neither refused nor ran the checks');
    this.verifications++;
    return {
      summary: 'Parsers verified for agents (15 checks)',
      allPassed: true,
      table: 'check result',
      verdict: 'verified',
    };
  }
  get listening(): number {
    return this.listeners.size;
  }
}

function lmTools(fleet: FakeFleet): AgentTools {
  return lmAgent({ fleet: fleet as unknown as Fleet, openSession: async () => ({}) }, source(fleet.settings));
}

/** An MCP client talking to the Kimi tools over the stand-in fleet, in memory. */
async function withMcp(
  fleet: FakeFleet,
  use: (client: Client) => Promise<void>,
  /** The client answers elicitation requests with this (it then declares the capability). */
  elicit?: (request: ElicitRequest) => Promise<ElicitResult>,
): Promise<void> {
  const mcp = new McpServer({ name: 'kimi-service', version: '0' });
  registerKimiTools(mcp, { fleet: fleet as unknown as Fleet, settings: source(fleet.settings), log: () => undefined });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'test', version: '0' }, elicit ? { capabilities: { elicitation: {} } } : {});
  if (elicit) client.setRequestHandler(ElicitRequestSchema, (request) => elicit(request));
  await Promise.all([mcp.connect(serverSide), client.connect(clientSide)]);
  try {
    await use(client);
  } finally {
    await client.close();
    await mcp.close();
  }
}

describe('agent tools: one definition', () => {
  it("package.json's contributes.languageModelTools is what src/agent defines (scripts/lm-tools.ts writes it)", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    assert.deepEqual(pkg.contributes.languageModelTools, languageModelTools());
    const nls = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.nls.json'), 'utf8')) as Record<string, string>;
    for (const [key, text] of Object.entries(languageModelToolTexts())) assert.equal(nls[key], text, key);
  });

  it('VS Code gets one set of agent tools: no MCP server definition provider', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    assert.equal(pkg.contributes.mcpServerDefinitionProviders, undefined);
    assert.doesNotMatch(
      fs.readFileSync(path.join(ROOT, 'src', 'extension.ts'), 'utf8'),
      /registerMcpServerDefinitionProvider|mcpProvider/,
    );
  });

  it('each contributed tool has what VS Code requires (name, displayName, modelDescription; a reference name with canBeReferencedInPrompt)', () => {
    const tools = languageModelTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      [...TOOL_NAMES],
    );
    for (const tool of tools) {
      assert.match(tool.name, /^[A-Za-z0-9_-]+$/);
      assert.doesNotMatch(tool.name, /^(copilot_|vscode_)/);
      assert.match(tool.displayName, /^%tool\.\w+\.displayName%$/, tool.name);
      assert.ok(tool.modelDescription.length > 100, tool.name);
      assert.equal(tool.toolReferenceName, tool.name);
      assert.equal(tool.inputSchema.type, 'object');
      assert.equal(tool.inputSchema.additionalProperties, false);
      assert.equal(tool.inputSchema.$schema, undefined);
    }
    const wait = tools.find((t) => t.name === 'kimi_wait')!;
    const timeout = (wait.inputSchema.properties as Record<string, Record<string, unknown>>).timeoutSeconds!;
    assert.equal(timeout.maximum, TOOL_WAIT_MAX_SECONDS);
    assert.equal(timeout.default, 90);
  });

  it('the descriptions fit SGLang and vLLM, systemd and containers', () => {
    const all = Object.values(DESCRIPTIONS).join(' ');
    assert.doesNotMatch(all, /SGLang, run as a systemd unit/);
    assert.match(DESCRIPTIONS.kimi_status, /SGLang or vLLM, run as a systemd unit or a container/);
    assert.match(DESCRIPTIONS.kimi_restart, /systemctl restart` of its unit, or a restart of its container/);
    assert.match(DESCRIPTIONS.kimi_logs, /the systemd journal of its unit, or the container's log/);
  });

  it("MCP's tools/list is the same definition: names, descriptions, input schemas, titles, annotations", async () => {
    const fleet = new FakeFleet(settingsOf());
    await withMcp(fleet, async (client) => {
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((t) => t.name),
        [...TOOL_NAMES],
      );
      for (const tool of tools) {
        const name = tool.name as (typeof TOOL_NAMES)[number];
        assert.equal(tool.description, MCP_DESCRIPTIONS[name]);
        assert.equal(tool.title, MCP_FACES[name].title);
        assert.deepEqual(tool.annotations, MCP_FACES[name].annotations);
        const { $schema: _ignored, ...schema } = tool.inputSchema as Record<string, unknown>;
        assert.deepEqual(schema, inputJsonSchema(name, MCP_INPUTS), name);
        if (name !== 'kimi_restart') {
          assert.equal(tool.description, DESCRIPTIONS[name]);
          assert.deepEqual(schema, inputJsonSchema(name), name);
        }
      }
    });
  });

  it("MCP's kimi_restart differs only by `confirmed` and by how it asks for the confirmation", () => {
    const lm = inputJsonSchema('kimi_restart') as { properties: Record<string, unknown> };
    const mcp = inputJsonSchema('kimi_restart', MCP_INPUTS) as { properties: Record<string, unknown> };
    assert.deepEqual(Object.keys(mcp.properties).sort(), ['confirmed', 'force', 'server']);
    assert.deepEqual({ ...mcp.properties, confirmed: undefined }, { ...lm.properties, confirmed: undefined });
    assert.match(MCP_DESCRIPTIONS.kimi_restart, /MCP elicitation/);
    assert.match(MCP_DESCRIPTIONS.kimi_restart, /confirmed: true, which you may pass only after asking the user/);
    assert.doesNotMatch(DESCRIPTIONS.kimi_restart, /confirmed/);
  });

  it('an LM tool input is checked with the same schema as over MCP', () => {
    const tooLong = parseToolInput('kimi_wait', { timeoutSeconds: 1000 });
    assert.ok(!tooLong.ok);
    assert.match(tooLong.error, /timeoutSeconds must be at most 300: call kimi_wait again to wait longer/);
    const soon = parseToolInput('kimi_wait', { timeoutSeconds: 'soon' });
    assert.ok(!soon.ok);
    assert.match(soon.error, /timeoutSeconds must be a number of seconds/);
    const none = parseToolInput('kimi_logs', undefined);
    assert.ok(none.ok);
    assert.deepEqual(none.input, { lines: 50 });
  });
});

describe('agent tools: which server', () => {
  it('the named server, else the active one, else the first; a refusal names the known ones', () => {
    const pick = (raw: Record<string, unknown>, name?: string) => {
      const choice = resolveServer(settingsOf(raw), name);
      return choice.ok ? choice.server.name : serverChoiceText(choice, 'kimiService.servers');
    };
    assert.equal(pick({}), 'a');
    assert.equal(pick({}, '  '), 'a');
    assert.equal(pick({ activeServer: 'b' }), 'b');
    assert.equal(pick({}, 'b'), 'b');
    assert.equal(pick({}, 'c'), 'no server named "c" in kimiService.servers (configured: "a", "b")');
    const none = resolveServer({ servers: [], activeServer: undefined });
    assert.ok(!none.ok);
    assert.equal(
      serverChoiceText(none, 'servers.json'),
      'no server is configured in servers.json (kimiService.servers is empty)',
    );
  });

  it('a tool call naming an unknown server is refused, nothing run', async () => {
    const fleet = new FakeFleet(settingsOf());
    await assert.rejects(
      lmTools(fleet).run('kimi_restart', { server: 'c' }),
      (error: Error) =>
        error instanceof ToolRefusal &&
        /^No server named "c" in kimiService\.servers \(configured: "a", "b"\)\. Nothing was run\.$/.test(
          error.message,
        ),
    );
    assert.equal(fleet.restarts, 0);
  });
});

describe('agent tools: the LM tools behave as the MCP server', () => {
  it('kimi_restart (LM) returns only once the host has the restart', async () => {
    const fleet = new FakeFleet(settingsOf());
    const server = fleet.servers[0]!;
    let settled = false;
    const pending = lmTools(fleet)
      .run('kimi_restart', {})
      .finally(() => (settled = true));
    // The restart was asked; the tool waits for the host's confirmation.
    while (fleet.listening === 0) await new Promise((r) => setImmediate(r));
    assert.equal(fleet.restarts, 1);
    assert.equal(settled, false, 'returned before the host had the restart');
    fleet.confirm(server);
    const result = await pending;
    assert.equal(result.isError, false);
    assert.equal(result.json.action, 'restarted');
    assert.match(result.text, /Restart of u1\.service on a issued \(expected: ~9 min\)\. Call kimi_wait now/);
  });

  it('kimi_restart whose restart the host does not confirm in time says so (call kimi_wait, do not restart)', async () => {
    const fleet = new FakeFleet(settingsOf());
    const agent = new AgentTools({
      fleet: fleet as unknown as Fleet,
      settings: () => source(fleet.settings).read(),
      watchOnStatus: false,
      logOwner: 'x',
      log: () => undefined,
      firstAnswerMs: 50,
    });
    const result = await agent.run('kimi_restart', {});
    assert.match(result.text, /was asked but the host has not confirmed it within 0 s\. Call kimi_wait to follow it/);
  });

  it('kimi_verify_parsers (LM and MCP) refuses a server that is not ready, in the same words, and runs nothing', async () => {
    const fleet = new FakeFleet(settingsOf());
    const server = fleet.servers[0]!;
    fleet.watching = true;
    // After a first full look (the unit, then /health): still loading.
    fleet.states.set(server.name, {
      ...initialState(Date.now()),
      connected: true,
      http: 'refused',
      verdict: 'loading',
    });
    let lmWords = '';
    await assert.rejects(lmTools(fleet).run('kimi_verify_parsers', {}), (error: Error) => {
      lmWords = error.message;
      return error instanceof ToolRefusal;
    });
    assert.match(
      lmWords,
      /\nThe parsers can be checked only on a ready server: call kimi_wait until it is ready, then kimi_verify_parsers\. Nothing was run\.$/,
    );

    await withMcp(fleet, async (client) => {
      const result = await client.callTool({ name: 'kimi_verify_parsers', arguments: {} });
      assert.equal(result.isError, true);
      const text = (result.content as { text: string }[])[0]!.text;
      assert.ok(text.includes(lmWords), `MCP: ${text}\nLM: ${lmWords}`);
    });
    assert.equal(fleet.verifications, 0);

    // Ready: it runs.
    fleet.states.set(server.name, { ...initialState(Date.now()), verdict: 'ready' });
    const ok = await lmTools(fleet).run('kimi_verify_parsers', {});
    assert.match(ok.text, /^a: Parsers verified for agents \(15 checks\) \(all checks passed\)\./);
    assert.equal(fleet.verifications, 1);
  });
});

describe('agent tools: the MCP server honours kimiService.confirmRestart', () => {
  const restartText = (r: CallToolResult) => (r.content[0] as { text: string }).text;
  const callRestart = (client: Client, args: Record<string, unknown> = {}) =>
    client.callTool({ name: 'kimi_restart', arguments: args }) as Promise<CallToolResult>;

  it('confirmWay: none when off or only following a load; elicit when the client can; else the call must carry confirmed', () => {
    const base = { confirmRestart: true, loading: false, force: false, canElicit: false, confirmed: false };
    assert.equal(confirmWay({ ...base, confirmRestart: false }), 'none');
    assert.equal(confirmWay({ ...base, loading: true }), 'none');
    assert.equal(confirmWay({ ...base, loading: true, force: true }), 'refuse');
    assert.equal(confirmWay({ ...base, canElicit: true }), 'elicit');
    assert.equal(confirmWay({ ...base, canElicit: true, confirmed: true }), 'elicit', 'a client that can ask is asked');
    assert.equal(confirmWay({ ...base, confirmed: true }), 'given');
    assert.equal(confirmWay(base), 'refuse');
  });

  it('a client with elicitation: the user is asked (server, unit, forecast); no restarts nothing, yes restarts', async () => {
    const fleet = new FakeFleet(settingsOf());
    const asked: ElicitRequest[] = [];
    let answer: ElicitResult = { action: 'decline' };
    await withMcp(
      fleet,
      async (client) => {
        const declined = await callRestart(client);
        assert.equal(declined.isError, true);
        assert.match(
          restartText(declined),
          /Not restarted: the user declined it \(kimiService\.confirmRestart\)\. Nothing was run/,
        );
        answer = { action: 'accept', content: { restart: false } };
        assert.match(restartText(await callRestart(client, { confirmed: true })), /the user answered no/);
        answer = { action: 'cancel' };
        assert.match(restartText(await callRestart(client)), /the user dismissed the question/);
        assert.equal(fleet.restarts, 0, 'nothing restarted without a yes');

        answer = { action: 'accept', content: { restart: true } };
        const restarting = callRestart(client);
        await waitFor(() => fleet.restarts === 1, { message: 'the restart after the yes' });
        fleet.confirm(fleet.servers[0]!);
        const restarted = await restarting;
        assert.ok(!restarted.isError, restartText(restarted));
        assert.equal((restarted.structuredContent as { action: string }).action, 'restarted');
      },
      async (request) => {
        asked.push(request);
        return answer;
      },
    );
    assert.equal(asked.length, 4);
    const params = asked[0]!.params as { message: string; requestedSchema: { properties: Record<string, unknown> } };
    assert.match(params.message, /^Restart u1\.service on a\?/);
    assert.match(params.message, /Expected load time: ~9 min/);
    assert.deepEqual(Object.keys(params.requestedSchema.properties), ['restart']);
  });

  it('a client without elicitation: refused until the call carries confirmed: true; following a load asks nothing', async () => {
    const fleet = new FakeFleet(settingsOf());
    await withMcp(fleet, async (client) => {
      const refused = await callRestart(client);
      assert.equal(refused.isError, true);
      assert.match(
        restartText(refused),
        /cannot be asked for a confirmation \(no MCP elicitation\)\. Ask the user whether to restart u1\.service on a now .*expected load time: ~9 min.*call kimi_restart again with confirmed: true\. Nothing was run\./,
      );
      assert.equal(fleet.restarts, 0);
      const restarting = callRestart(client, { confirmed: true });
      await waitFor(() => fleet.restarts === 1, { message: 'the confirmed restart' });
      fleet.confirm(fleet.servers[0]!);
      assert.ok(!(await restarting).isError);

      fleet.loading = true; // a load under way: the call follows it (nothing on the host is touched), no question
      const following = callRestart(client);
      await waitFor(() => fleet.restarts === 2, { message: 'the call reaching the fleet' });
      fleet.confirm(fleet.servers[0]!);
      assert.ok(!(await following).isError);
    });
  });

  it('kimiService.confirmRestart off: restarts without asking', async () => {
    const fleet = new FakeFleet(settingsOf({ confirmRestart: false }));
    await withMcp(fleet, async (client) => {
      const restarting = callRestart(client);
      await waitFor(() => fleet.restarts === 1, { message: 'the restart' });
      fleet.confirm(fleet.servers[0]!);
      assert.ok(!(await restarting).isError);
    });
  });
});
