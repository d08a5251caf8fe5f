/** present/hints: the core's VS Code words, turned into each front's own. */
import { strict as assert } from 'node:assert';
import { forFront, forFrontDeep } from '../../src/present/hints';
import { sudoRefusalMessage } from '../../src/target/systemd/sudoers';
import { unauthorizedReason } from '../../src/engine/httpAnswers';
import { restartError } from '../../src/target/systemd/systemdTarget';

const refusal = sudoRefusalMessage({
  host: 'gpu1',
  unit: 'sglang.service',
  action: 'systemctl restart sglang.service',
  command: 'sudo -n systemctl restart --no-block -- sglang.service',
  stderr: 'sudo: a password is required',
});

describe('hints per front', () => {
  it('VS Code (and its language-model tools) read the core words unchanged', () => {
    assert.equal(forFront(refusal, 'vscode'), refusal);
    assert.equal(forFront(refusal, 'lm'), refusal);
    assert.match(refusal, /"Kimi Service: Copy sudoers rule" copies the sudoers rules/);
  });

  it('the CLI and MCP read no palette command: the sudoers rules of the docs instead', () => {
    for (const front of ['cli', 'mcp'] as const) {
      const text = forFront(refusal, front);
      assert.doesNotMatch(text, /Kimi: /);
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
    const key = unauthorizedReason(false);
    assert.equal(
      forFront(key, 'cli'),
      'HTTP 401: the server wants an API key (--api-key): set it in KIMI_API_KEY for kimi-service',
    );
    const line = JSON.stringify({ message: key });
    assert.doesNotMatch(forFront(line, 'cli'), /Kimi: /);
    assert.deepEqual(forFrontDeep({ a: [key], n: 1 }, 'mcp'), { a: [forFront(key, 'mcp')], n: 1 });
  });
});
