/** present/hints: the core marks a hint by its kind; each front puts its own words there. */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { forFront, forFrontDeep, HINT_TITLES } from '../../src/present/hints';
import { HINT_KINDS } from '../../src/util/hintMark';
import { sudoRefusalMessage } from '../../src/target/systemd/sudoers';
import { unauthorizedReason } from '../../src/engine/httpAnswers';
import { restartError } from '../../src/target/systemd/systemdTarget';
import { AlreadyWatchingError } from '../../src/monitor/watch/session';
import type { LoadState } from '../../src/monitor/state/loadStateTypes';

const core = sudoRefusalMessage({
  host: 'gpu1',
  unit: 'sglang.service',
  action: 'systemctl restart sglang.service',
  command: 'sudo -n systemctl restart --no-block -- sglang.service',
  stderr: 'sudo: a password is required',
});

describe('hints per front', () => {
  it('the core names no front: its message marks the hint, VS Code (and its language-model tools) name the palette command', () => {
    assert.doesNotMatch(core, /Kimi Service|docs\/least-privilege/);
    const refusal = forFront(core, 'vscode');
    assert.equal(forFront(core, 'lm'), refusal);
    assert.match(
      refusal,
      /^sudo asks for a password on gpu1: allow "systemctl restart sglang\.service" without a password\. Refused: sudo -n systemctl restart --no-block -- sglang\.service\. "Kimi Service: Copy sudoers rule" copies the sudoers rules that allow exactly the extension's commands \(install them with sudo visudo -f \/etc\/sudoers\.d\/kimi-sglang\), or connect as a user who may run it\.$/,
    );
    assert.equal(
      forFront(unauthorizedReason(false), 'vscode'),
      'HTTP 401: the server wants an API key (--api-key): set it with "Kimi Service: Set server API key"',
    );
    const state = { verdict: 'loading' } as LoadState;
    assert.equal(
      forFront(new AlreadyWatchingError('gpu1', state).message, 'vscode'),
      'Kimi on gpu1 is already being watched (loading). Run "Kimi Service: Stop watching" first.',
    );
  });

  it('the CLI and MCP read no palette command: the sudoers rules of the docs instead', () => {
    for (const front of ['cli', 'mcp'] as const) {
      const text = forFront(core, front);
      assert.doesNotMatch(text, /Kimi Service: |⟦/);
      assert.match(
        text,
        /docs\/least-privilege\.md gives the sudoers rules that allow exactly these commands \(install them with sudo visudo/,
      );
    }
  });

  it('a polkit refusal and a missing API key, also inside a JSON line', () => {
    const denied = restartError('Failed to restart sglang.service: Access denied', 'sglang.service', false, 'gpu1');
    assert.equal(denied.kind, 'access-denied');
    assert.match(forFront(denied.message, 'cli'), /install the sudoers rules of docs\/least-privilege\.md, or connect/);
    assert.match(
      forFront(denied.message, 'vscode'),
      /install the rules of "Kimi Service: Copy sudoers rule", or connect/,
    );
    const key = unauthorizedReason(false);
    assert.equal(
      forFront(key, 'cli'),
      'HTTP 401: the server wants an API key (--api-key): set it in KIMI_API_KEY for kimi-service',
    );
    const line = JSON.stringify({ message: key });
    assert.equal(forFront(line, 'cli'), JSON.stringify({ message: forFront(key, 'cli') }));
    assert.deepEqual(forFrontDeep({ a: [key], n: 1 }, 'mcp'), { a: [forFront(key, 'mcp')], n: 1 });
  });

  it("each hint's palette title is the title package.nls.json gives one of package.json's commands", () => {
    const root = path.join(__dirname, '..', '..');
    const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      contributes: { commands: { command: string; title: string }[] };
    };
    const nls = JSON.parse(fs.readFileSync(path.join(root, 'package.nls.json'), 'utf8')) as Record<string, string>;
    const titles = manifest.contributes.commands.map((c) => nls[c.title.replace(/^%|%$/g, '')]);
    for (const kind of HINT_KINDS) {
      const title = HINT_TITLES[kind]();
      assert.ok(titles.includes(title), `${kind}: no contributed command is titled "${title}"`);
    }
  });
});
