// The verified server as a chat model, used by another extension through the public vscode.lm
// API (test/e2e/fixture/chat-client): after a load and the parser check, selectChatModels({
// vendor }) returns "Kimi K2.6 on sim"; a request with a tool gets a LanguageModelToolCallPart
// with the arguments the server produced; a plain question streams text without its reasoning;
// a request in flight when the server is stopped ends naming the state; after that the model is
// gone. An agent loop (a call, its result, two parallel calls, a follow-up) gets its reasoning
// carried back on each tool-call message, as the simulator's request log shows.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { waitFor } from '../util/waitFor';
import { FixtureExtension } from './fixtureExtension';
import { restartFromPalette, printResultsDir, simForLoad, unitWithParsers, useScenario } from './scenario';
import {
  clickDialogButton,
  paletteRows,
  runCommand,
  screenshot,
  waitForNotification,
  waitForStatus,
} from './workbench';

after(printResultsDir);

/** The chat client fixture: another extension that uses the chat model and writes what it got. */
const chatClient = new FixtureExtension('chat-client', 'the chat client fixture');

interface Report {
  models?: { id: string; name: string; vendor: string; maxInputTokens: number }[];
  steps?: { prompt: string; text: string; calls: { callId: string; name: string; input: unknown }[] }[];
  parts?: { type: string; value?: string; callId?: string; name?: string; input?: unknown }[];
  tokens?: number;
  error?: string;
  unexpectedAnswer?: boolean;
}

/**
 * Runs a fixture command from the palette and waits for its report; a consent dialog (an
 * extension using another extension's model) is answered with Allow and returned.
 */
async function runFixture(
  page: Page,
  title: string,
  name: string,
  timeoutMs = 120_000,
): Promise<{ report: Report; dialogs: string[] }> {
  const file = join(chatClient.reportDir, `${name}.json`);
  rmSync(file, { force: true });
  await runCommand(page, `Kimi Chat Client: ${title}`);
  const dialogs: string[] = [];
  const box = page.locator('.monaco-dialog-box');
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(file)) {
    if (Date.now() > deadline)
      throw new Error(`no report from "${title}" within ${timeoutMs / 1000} s; dialogs: ${JSON.stringify(dialogs)}`);
    if (await box.isVisible()) {
      const text = (await box.innerText()).trim();
      dialogs.push(text);
      await screenshot(page, `chat-consent-${name}`);
      await clickDialogButton(page, 'Allow');
    }
    await page.waitForTimeout(200);
  }
  return { report: JSON.parse(readFileSync(file, 'utf8')) as Report, dialogs };
}

/**
 * Waits until a connection to the server's port holds an unread request larger than a health
 * probe (`ss`: Recv-Q of the accepted socket the SIGSTOPped server never reads).
 */
async function waitForQueuedRequest(host: {
  ssh(c: string): Promise<{ stdout: string }>;
  httpPort: number;
}): Promise<void> {
  await waitFor(
    async () => {
      const r = await host.ssh(`ss -Htn state established '( sport = :${host.httpPort} )'`);
      return r.stdout
        .split('\n')
        .map((l) => Number(l.trim().split(/\s+/)[0]))
        .some((n) => Number.isFinite(n) && n > 200);
    },
    { timeoutMs: 60_000, intervalMs: 100, message: "a request queued on the hung server's port" },
  );
}

describe('e2e: the verified server as a chat model (vscode.lm)', function () {
  const scenario = useScenario({
    name: 'chat-model',
    // The simulated model needs its reasoning back in a tool chain, as Kimi K2's thinking models do:
    // without it the answer after a tool result ignores the result (sim.json chatFaults).
    gpuHost: { sim: { ...simForLoad(8), chatFaults: { needsReasoningBack: true } } },
    unitText: (h) => unitWithParsers(h),
    // The editor's own chat (and the model picker) must not be switched off for this one.
    settings: { 'chat.disableAIFeatures': false },
    extraVsix: () => [chatClient.packageVsix()],
    env: () => ({ KIMI_CHAT_REPORT_DIR: chatClient.reportDir }),
  });

  after(() => chatClient.remove());

  it('after a load and the parser check, another extension gets "Kimi K2.6 on sim" and a tool call with the arguments the server produced', async () => {
    const { page, host } = scenario();
    await restartFromPalette(page, { keepRecorders: true });
    await waitForStatus(page, /Kimi: ready/, { timeoutMs: 180_000, failOn: /failed|unreachable/ });
    await waitForNotification(page, /ready, parsers verified for agents \(\d+ checks\)/, { timeoutMs: 60_000 });

    const { report, dialogs } = await runFixture(page, 'Ask with a tool', 'tool');
    console.log(`    consent dialogs: ${JSON.stringify(dialogs)}`);
    console.log(`    report: ${JSON.stringify(report)}`);
    assert.equal(report.error, undefined, report.error);
    assert.deepEqual(
      report.models?.map((m) => [m.vendor, m.name]),
      [['kimi-service', 'Kimi K2.6 on sim']],
    );
    assert.ok(
      (report.models?.[0]?.maxInputTokens ?? 0) > 100_000,
      'the context length comes from the server (262144 in the simulator)',
    );
    const calls = (report.parts ?? []).filter((p) => p.type === 'toolCall');
    assert.equal(calls.length, 1, JSON.stringify(report.parts));

    // What the server itself answers to the same question (its tool-call parser at work), asked on the host.
    const body = JSON.stringify({
      model: '/root/models/Kimi-K2.6',
      messages: [{ role: 'user', content: 'What is the weather in Paris right now? Use the get_weather tool.' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Get the current weather in a city.',
            parameters: {
              type: 'object',
              properties: { city: { type: 'string', description: 'City name' } },
              required: ['city'],
            },
          },
        },
      ],
    });
    const direct = await host.ssh(
      `curl -s -H 'Content-Type: application/json' -d '${body.replace(/'/g, `'\\''`)}' ${host.serverUrl}/v1/chat/completions`,
    );
    const serverCall = (
      JSON.parse(direct.stdout) as {
        choices: { message: { tool_calls: { id: string; function: { name: string; arguments: string } }[] } }[];
      }
    ).choices[0]!.message.tool_calls[0]!;
    assert.equal(calls[0]!.name, serverCall.function.name);
    assert.deepEqual(calls[0]!.input, JSON.parse(serverCall.function.arguments));
    assert.equal(calls[0]!.callId, serverCall.id, "the call id is the server's (kimi_k2: functions.NAME:N)");
    assert.equal(
      (report.parts ?? [])
        .filter((p) => p.type === 'text')
        .map((p) => p.value)
        .join('')
        .trim(),
      '',
      'no text besides the tool call',
    );
    assert.ok((report.tokens ?? 0) > 0, 'countTokens answers');
    await screenshot(page, 'chat-tool-call');
  });

  it('an agent loop through vscode.lm (a call, its result, two parallel calls, their results, a follow-up): the reasoning of each answer comes back on its tool-call message', async () => {
    const { page, host } = scenario();
    const logFile = join(host.stateDir, 'chat-requests.jsonl');
    const before = existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').filter(Boolean).length : 0;
    const { report } = await runFixture(page, 'Run an agent loop', 'agent');
    console.log(`    agent: ${JSON.stringify(report.steps)}`);
    assert.equal(report.error, undefined, report.error);
    const steps = report.steps ?? [];
    assert.deepEqual(
      steps.map((s) => s.calls.map((c) => [c.callId, (c.input as { city?: string }).city])),
      [
        [['functions.get_weather:0', 'Paris']],
        [],
        [
          ['functions.get_weather:1', 'Tokyo'],
          ['functions.get_weather:2', 'London'],
        ],
        [],
        [],
      ],
    );
    // The answers after the results use them (the simulated model ignores a result when its reasoning is missing).
    assert.match(steps[1]!.text, /^According to the tool: .*"temperature_c":18/);
    assert.match(steps[3]!.text, /^According to the tool: .*"temperature_c":12/);
    assert.ok(steps[4]!.text.length > 0, 'the follow-up is answered');

    // What reached the server: the simulator's log of every chat request body.
    const entries = readFileSync(logFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .slice(before)
      .map(
        (l) =>
          JSON.parse(l) as {
            body: { messages: Record<string, unknown>[] };
            toolCallMessages: {
              ids: string[];
              reasoningContentChars: number;
              reasoningFieldChars: number;
              inCurrentChain: boolean;
            }[];
          },
      )
      .filter((e) => e.body.messages.some((m) => m.role === 'user' && /Paris right now/.test(String(m.content))));
    assert.equal(entries.length, 5, 'one request per step');
    const figures = entries.map((e) =>
      e.toolCallMessages.map(
        (m) => `${m.ids.join('+')}: ${m.reasoningContentChars}${m.inCurrentChain ? '' : ' (earlier turn)'}`,
      ),
    );
    console.log(
      `    [measure] reasoning chars sent back per tool-call message, per request: ${JSON.stringify(figures)}`,
    );
    for (const [i, e] of entries.entries()) {
      for (const m of e.toolCallMessages) {
        const message = e.body.messages.find(
          (x) => Array.isArray(x.tool_calls) && (x.tool_calls as { id: string }[])[0]?.id === m.ids[0],
        )!;
        if (m.inCurrentChain) {
          assert.match(
            String(message.reasoning_content),
            /^The user asks: ".*"\. I should call the get_weather tool to answer this\.$/,
            `request ${i + 1}: the reasoning of ${m.ids.join(', ')} came back`,
          );
          assert.equal(message.reasoning, message.reasoning_content, "under vLLM's newer name too");
        } else {
          // Kimi's template drops the reasoning of turns before the last answer: it is not sent either.
          assert.equal(m.reasoningContentChars + m.reasoningFieldChars, 0, `request ${i + 1}: ${m.ids.join(', ')}`);
        }
      }
    }
    assert.deepEqual(
      entries.map((e) => e.toolCallMessages.map((m) => m.inCurrentChain)),
      [[], [true], [false], [false, true], [false, false]],
    );
  });

  it('the editor lists it among its language models (Chat: Manage Language Models)', async function () {
    const page = scenario().page;
    // VS Code 1.104 has no such view without a chat extension signed in (it came with the models editor).
    const rows = await paletteRows(page, 'Chat: Manage Language Models', {
      until: (r) => r.startsWith('Chat: Manage Language Models'),
      timeoutMs: 10_000,
    });
    if (!rows.some((r) => r.startsWith('Chat: Manage Language Models'))) this.skip();
    await runCommand(page, 'Chat: Manage Language Models');
    const row = page.getByText('Kimi K2.6 on sim').first();
    await row.waitFor({ state: 'visible', timeout: 30_000 });
    await screenshot(page, 'chat-manage-models');
    await page.keyboard.press('Escape');
    await runCommand(page, 'View: Close Editor').catch(() => undefined);
  });

  it('a plain question streams text, and the reasoning is not in it', async () => {
    const { report } = await runFixture(scenario().page, 'Ask a question', 'question');
    console.log(`    report: ${JSON.stringify(report)}`);
    assert.equal(report.error, undefined, report.error);
    const parts = report.parts ?? [];
    assert.ok(parts.length >= 2, `streamed in several parts: ${JSON.stringify(parts)}`);
    assert.ok(
      parts.every((p) => p.type === 'text'),
      JSON.stringify(parts),
    );
    const text = parts.map((p) => p.value).join('');
    assert.equal(text, 'The capital of France is Paris.');
    // The simulator's reasoning for this question begins "The user says".
    assert.doesNotMatch(text, /The user says|think/i);
  });

  it('the setting kimiService.chatModel.enabled withdraws the model, and brings it back', async () => {
    const page = scenario().page;
    const off = await runFixture(page, 'Turn the Kimi chat model off', 'disable');
    assert.deepEqual(off.report.models, [], JSON.stringify(off.report));
    const on = await runFixture(page, 'Turn the Kimi chat model on', 'enable');
    assert.deepEqual(
      on.report.models?.map((m) => m.name),
      ['Kimi K2.6 on sim'],
      JSON.stringify(on.report),
    );
  });

  it('a request in flight when the server is stopped ends with an error naming the state, not a hang', async () => {
    const { page, host } = scenario();
    // The server hangs (SIGSTOP), so the request is sent and gets no answer; then the unit is
    // stopped (its SIGTERM waits for SIGCONT): the unit is deactivating, the model is withdrawn.
    await host.killServer('SIGSTOP');
    try {
      const started = Date.now();
      const file = join(chatClient.reportDir, 'inflight.json');
      rmSync(join(chatClient.reportDir, 'inflight-sent.json'), { force: true });
      rmSync(file, { force: true });
      await runCommand(page, 'Kimi Chat Client: Ask while the server hangs');
      const sent = join(chatClient.reportDir, 'inflight-sent.json');
      while (!existsSync(sent)) {
        assert.ok(Date.now() - started < 60_000, 'the request was not sent within 60 s');
        await page.waitForTimeout(100);
      }
      // The request is at the hung server: its bytes wait in a connection the stopped process never reads.
      await waitForQueuedRequest(host);
      assert.equal(existsSync(file), false, 'no answer from a hung server');
      const stop = await host.ssh(`systemctl stop --no-block ${host.unitName}`);
      assert.equal(stop.code, 0, stop.stderr);
      while (!existsSync(file)) {
        assert.ok(Date.now() - started < 90_000, 'the request in flight did not end within 90 s');
        await page.waitForTimeout(100);
      }
      const report = JSON.parse(readFileSync(file, 'utf8')) as Report;
      console.log(`    report after ${((Date.now() - started) / 1000).toFixed(1)} s: ${JSON.stringify(report)}`);
      assert.equal(report.parts, undefined, 'no answer');
      // The state word depends on how the hung process ends (systemd's SIGTERM, then SIGCONT).
      assert.match(
        report.error ?? '',
        /^Kimi K2\.6 on sim stopped answering: the server (is (stopping|stopped|restarting|unhealthy)|failed)\b/,
      );
      await screenshot(page, 'chat-inflight-stopped');
    } finally {
      await host.killServer('SIGCONT').catch(() => undefined);
    }
  });

  it('after the server is stopped the model is gone, and a request to it fails', async () => {
    const { page, host } = scenario();
    // Stopped by the previous test already; stopping again changes nothing.
    const r = await host.ssh(`systemctl stop ${host.unitName}`);
    assert.equal(r.code, 0, r.stderr);
    await waitForStatus(page, /Kimi: (stopped|failed)/, { timeoutMs: 120_000 });
    const { report } = await runFixture(page, 'Ask again', 'again');
    console.log(`    report: ${JSON.stringify(report)}`);
    assert.deepEqual(report.models, [], 'no Kimi model is offered any more');
    assert.equal(report.unexpectedAnswer, false, report.error);
    // VS Code itself refuses a request to a model no provider offers (before the provider sees it).
    assert.match(report.error ?? '', /kimi-service\/sim/);
    await screenshot(page, 'chat-after-stop');
  });
});
