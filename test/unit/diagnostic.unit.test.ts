import { strict as assert } from 'node:assert';
import { parseSettings } from '../../src/config/parseSettings';
import type { ServerProfile } from '../../src/config/config';
import { redact } from '../../src/util/redact';
import { LineTail } from '../../src/util/lineTail';
import { tailedLog } from '../../src/fronts/vscode/output/logTail';
import type * as vscode from 'vscode';
import { StateHistory } from '../../src/present/stateHistory';
import { diagnosticReport, serverKind } from '../../src/present/diagnosticReport';

function profiles(servers: Record<string, unknown>[]): ServerProfile[] {
  const result = parseSettings({ servers });
  if (!result.ok) throw new Error(result.errors.join('\n'));
  return [...result.settings.servers];
}

describe('problem report: redaction (what may leave the machine)', () => {
  const known = {
    secrets: ['sk-live-123456'],
    hosts: ['gpu7.corp.example', '10.1.2.3', 'gpu7'],
    users: ['alice', 'root'],
    home: '/home/alice',
  };

  it('masks API keys, Bearer tokens, *_TOKEN values, passwords and a known key anywhere', () => {
    const text = [
      'ExecStart=python -m sglang.launch_server --api-key abc123 --port 30000',
      'Authorization: Bearer eyJhbGciOi.xyz',
      'Environment=HF_TOKEN=hf_abcdef',
      '"apiKey": "k-1", "password": "hunter2"',
      'sudo password: s3cret; passphrase=open sesame',
      'curl -H "x" https://bob:pw@gpu7.corp.example/v1 (used sk-live-123456)',
    ].join('\n');
    const out = redact(text, known);
    for (const secret of ['abc123', 'eyJhbGciOi', 'hf_abcdef', 'k-1', 'hunter2', 's3cret', 'open', 'bob:pw', 'sk-live'])
      assert.ok(!out.includes(secret), `${secret} left in:\n${out}`);
    assert.match(out, /--api-key \*\*\* --port 30000/);
    assert.match(out, /Authorization: Bearer \*\*\*/);
    assert.match(out, /https:\/\/\*\*\*@host-1\/v1/);
  });

  it('removes private-key blocks, even one cut short', () => {
    const key = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\nAAAA\n-----END OPENSSH PRIVATE KEY-----';
    assert.equal(redact(`before\n${key}\nafter`), 'before\n[private key removed]\nafter');
    assert.equal(redact('x -----BEGIN RSA PRIVATE KEY-----\nMIIE'), 'x [private key removed]');
  });

  it('replaces each configured host and user by a stable placeholder, whole names only; loopback and root stay', () => {
    const out = redact(
      'alice@gpu7.corp.example:22 up; gpu7 (alias) at 10.1.2.3; gpu77, mygpu7 and gpu7-b are others; 127.0.0.1:30000 root /home/alice/.ssh/id_ed25519',
      known,
    );
    assert.equal(
      out,
      'user-1@host-1:22 up; host-3 (alias) at host-2; gpu77, mygpu7 and gpu7-b are others; 127.0.0.1:30000 root ~/.ssh/id_ed25519',
    );
  });

  it('is idempotent and leaves ordinary text alone', () => {
    const text = 'loading 45% (weights), eos_token_id=2, max_tokens=16, 3 of 8 shards';
    assert.equal(redact(text, known), text);
    const once = redact('HF_TOKEN=x alice@gpu7', known);
    assert.equal(redact(once, known), once);
  });
});

describe('problem report: the log tail and the state history', () => {
  it('keeps the last lines only, split at newlines', () => {
    const tail = new LineTail(3);
    tail.push('a');
    tail.push('b\nc');
    tail.push('d');
    assert.deepEqual(tail.last(), ['b', 'c', 'd']);
  });

  it('keeps each server’s state changes (a repeat is not a change), the last N', () => {
    const h = new StateHistory(2);
    h.record('gpu1', 'restarting', 1);
    h.record('gpu1', 'restarting', 2);
    h.record('gpu1', 'loading', 3);
    h.record('gpu1', 'ready', 4);
    h.record('gpu2', 'failed', 5);
    assert.deepEqual(h.of('gpu1'), [
      { at: 3, state: 'loading' },
      { at: 4, state: 'ready' },
    ]);
    assert.deepEqual(h.of('gpu2'), [{ at: 5, state: 'failed' }]);
    assert.deepEqual(h.of('nope'), []);
  });
});

describe('problem report: the diagnostic text', () => {
  const [unit, container, multi, local] = profiles([
    { name: 'gpu1', host: 'gpu1', unit: 'sglang', sudo: true },
    { name: 'gpu2', host: 'gpu2', container: 'vllm' },
    {
      name: 'k2',
      nodes: [
        { host: 'a', unit: 'sglang' },
        { host: 'b', unit: 'sglang' },
      ],
    },
    { name: 'here', host: 'local', unit: 'sglang' },
  ]);

  it('names each server’s kind: unit or container, multi-node, sudo, local or over SSH', () => {
    assert.equal(serverKind(unit!), 'systemd unit with sudo, over SSH');
    assert.equal(serverKind(container!), 'Docker container, over SSH');
    assert.equal(serverKind(multi!), 'multi-node (2 nodes), systemd unit, over SSH');
    assert.equal(serverKind(local!), 'systemd unit, on this machine');
  });

  it('has the versions, the servers with their states, the settings and the log in fences a log line cannot close', () => {
    const text = diagnosticReport({
      extension: { id: 'kimi-tools.kimi-service', version: '0.2.0' },
      editor: { app: 'Visual Studio Code', version: '1.139.1', remote: 'ssh-remote' },
      platform: 'linux x64',
      servers: [
        { profile: unit!, state: 'ready', engine: 'SGLang', history: [{ at: 0, state: 'loading' }] },
        { profile: container!, state: 'not watched', history: [] },
      ],
      settings: { 'kimiService.confirmRestart': true },
      logLines: ['line one', 'a ``` fence in a log line'],
      now: 90_000,
    });
    assert.match(text, /Extension: kimi-tools\.kimi-service 0\.2\.0/);
    assert.match(text, /Editor: Visual Studio Code 1\.139\.1, remote ssh-remote/);
    assert.match(
      text,
      /\*\*gpu1\*\*: systemd unit with sudo, over SSH; SGLang; now ready\n {2}- 1970-01-01T00:00:00\.000Z \(90 s ago\): loading/,
    );
    assert.match(text, /\*\*gpu2\*\*: Docker container, over SSH; engine not known yet; now not watched/);
    assert.match(text, /"kimiService\.confirmRestart": true/);
    assert.match(text, /The last 2 lines of the log\n\n````\nline one\na ``` fence in a log line\n````/);
  });
});

describe('problem report: the log lines kept as they are written', () => {
  it('keeps what the channel shows, with time and level, and still writes to the channel', () => {
    const written: string[] = [];
    const channel = {
      logLevel: 3, // vscode.LogLevel.Info
      info: (m: string) => written.push(`info ${m}`),
      trace: (m: string) => written.push(`trace ${m}`),
      appendLine: (m: string) => written.push(`line ${m}`),
      name: 'Kimi Service',
    };
    const tail = new LineTail(10);
    const log = tailedLog(channel as unknown as vscode.LogOutputChannel, tail);
    log.info('[gpu1] ready');
    log.trace('[gpu1] reasoning');
    log.appendLine('plain');
    assert.equal(log.name, 'Kimi Service');
    assert.deepEqual(written, ['info [gpu1] ready', 'trace [gpu1] reasoning', 'line plain']);
    assert.deepEqual(
      tail.last().map((l) => l.replace(/^\S+ /, '')),
      ['[info] [gpu1] ready', '[info] plain'],
    );
    assert.match(tail.last()[0]!, /^\d{4}-\d\d-\d\dT/);
  });
});
