/**
 * The parser flags end to end against the real sshd + simulated host: the drop-in written through SSH
 * at the real /etc/systemd/system path (bind-mounted in the host's namespace), reload,
 * restart, watch to ready, then every parser check through the tunnel.
 */
import { targetFor } from '../../src/target/target';
import { strict as assert } from 'node:assert';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { enableParsers, rollback, DROP_IN_NAME } from '../../src/target/systemd/parserDropIn';
import { verifyServer } from '../../src/verify/serverVerification';
import type { VerifyResult } from '../../src/verify/verifier';
import { changeDeps, FAST_WATCH, sessionForHost, type TestSession } from './simHost';

function status(result: VerifyResult, name: string): { status: string; evidence: string } {
  const check = result.checks.find((c) => c.name === name);
  assert.ok(check, `no check named ${name}`);
  return check;
}

async function restartsIn(host: GpuHost): Promise<number> {
  return (await host.execLog()).filter((l) => /systemctl.* restart /.test(l)).length;
}

describe('enable and verify the kimi_k2 parsers over real SSH', function () {
  this.timeout(120_000);
  let host: GpuHost;
  let test: TestSession;
  const lines: string[] = [];

  before(async () => {
    host = await startGpuHost({ shards: 6, shardBytes: 1024 * 1024, modelDirName: 'Kimi K2.6 (test copy)' });
    test = await sessionForHost(host);
  });
  after(async () => {
    test?.dispose();
    await host?.stop();
  });

  it('parsers off: the reasoning and tool-call checks fail with evidence', async () => {
    const outcome = await test.session.watch('restart', FAST_WATCH);
    assert.equal(outcome.end, 'ready');
    const result = await verifyServer(
      test.session.transport,
      test.session.client,
      targetFor(test.session.profile),
      (l) => lines.push(l),
    );
    assert.equal(result.allPassed, false);
    assert.equal(status(result, 'reasoning').status, 'fail');
    assert.match(status(result, 'reasoning').evidence, /<\/think>|reasoning_content/);
    assert.equal(status(result, 'tool calling').status, 'fail');
    assert.match(status(result, 'tool calling').evidence, /tool_calls|<\|tool_call/);
    assert.equal(status(result, 'server flags').status, 'fail');
  });

  it('enable on a unit without the flags: drop-in written, restart, ready, all checks pass; a model path with spaces survives', async () => {
    const before = await restartsIn(host);
    const result = await enableParsers(changeDeps(test, lines), host.unitName, {
      reasoningParser: 'kimi_k2',
      toolCallParser: 'kimi_k2',
    });
    assert.equal(result.kind, 'changed');
    const dropIns = await host.readDropIns();
    assert.match(dropIns[DROP_IN_NAME], /^ExecStart=$/m, 'ExecStart is reset first');
    assert.match(dropIns[DROP_IN_NAME], /--tool-call-parser kimi_k2/);
    assert.match(dropIns[DROP_IN_NAME], /--reasoning-parser kimi_k2/);
    assert.equal(await restartsIn(host), before, 'enableParsers itself restarts nothing');

    const outcome = await test.session.watch('restart', FAST_WATCH);
    assert.equal(outcome.end, 'ready', outcome.message);
    const verify = await verifyServer(
      test.session.transport,
      test.session.client,
      targetFor(test.session.profile),
      (l) => lines.push(l),
    );
    assert.ok(verify.allPassed, JSON.stringify(verify.checks, null, 1));
    assert.equal(verify.model, '/root/models/Kimi-K2.6');
    const info = await test.session.client.serverInfo();
    assert.ok(info.ok);
    assert.equal(
      (info.info as Record<string, unknown>).model_path,
      host.modelPath,
      'the model path with spaces reached the process intact',
    );
  });

  it('enable when already set: says so, writes and restarts nothing', async () => {
    const before = await restartsIn(host);
    const dropInsBefore = await host.readDropIns();
    const result = await enableParsers(changeDeps(test, lines), host.unitName, {
      reasoningParser: 'kimi_k2',
      toolCallParser: 'kimi_k2',
    });
    assert.equal(result.kind, 'already-set');
    assert.deepEqual(await host.readDropIns(), dropInsBefore);
    assert.equal(await restartsIn(host), before);
  });

  it('wrong reasoning parser (kimi): the reasoning check fails with evidence, tool calls still pass', async () => {
    const result = await enableParsers(changeDeps(test, lines), host.unitName, {
      reasoningParser: 'kimi',
      toolCallParser: 'kimi_k2',
    });
    assert.equal(result.kind, 'changed');
    if (result.kind !== 'changed') return;
    assert.ok(result.rollback.backupPath, 'the previous drop-in is kept as a backup');
    const backup = await host.nsExec(`cat '${result.rollback.backupPath}'`);
    assert.match(backup.stdout, /--reasoning-parser kimi_k2/);
    assert.equal((await test.session.watch('restart', FAST_WATCH)).end, 'ready');
    const verify = await verifyServer(
      test.session.transport,
      test.session.client,
      targetFor(test.session.profile),
      (l) => lines.push(l),
    );
    assert.equal(status(verify, 'reasoning').status, 'fail');
    assert.match(status(verify, 'reasoning').evidence, /<\/think>|null/);
    assert.equal(status(verify, 'tool calling').status, 'pass');
    // Put kimi_k2 back for the next case, through the rollback path.
    await rollback(changeDeps(test, lines), result.rollback);
    assert.match((await host.readDropIns())[DROP_IN_NAME], /--reasoning-parser kimi_k2/);
  });

  it('a failing start: roll back restores the old command line, and it starts again', async () => {
    const before = (await host.readDropIns())[DROP_IN_NAME];
    const result = await enableParsers(changeDeps(test, lines), host.unitName, {
      reasoningParser: 'deepseek-r1',
      toolCallParser: 'kimi_k2',
    });
    assert.equal(result.kind, 'changed');
    if (result.kind !== 'changed') return;
    // The new command line makes the server die while it starts.
    await host.configureSimulator({ fault: { crashAt: 'init', kind: 'traceback' } });
    const failed = await test.session.watch('restart', FAST_WATCH);
    assert.equal(failed.end, 'failed');
    await rollback(changeDeps(test, lines), result.rollback);
    assert.equal((await host.readDropIns())[DROP_IN_NAME], before, 'the previous drop-in is back, byte for byte');
    await host.configureSimulator({ fault: {} });
    assert.equal((await test.session.watch('restart', FAST_WATCH)).end, 'ready');
    const info = await test.session.client.serverInfo();
    assert.ok(info.ok);
    assert.equal((info.info as Record<string, unknown>).reasoning_parser, 'kimi_k2');
  });
});
