import { strict as assert } from 'node:assert';
import type { ServerProfile } from '../../src/config/config';
import type { ServerSnapshot } from '../../src/fleet/fleetTypes';
import { causeLine, serverReport, waitReport } from '../../src/present/report';
import {
  defaultConfigFile,
  defaultVscodeSettingsFile,
  loadStandaloneSettings,
  nonInteractivePolicy,
} from '../../src/fleet/servers/standalone';
import { reduce } from '../../src/monitor/state/loadState';
import type { LoadState } from '../../src/monitor/state/loadStateTypes';
import { runningUnit, halfLoaded } from '../util/loadFixtures';

const server = {
  name: 'gpu1',
  host: 'gpu1.lan',
  port: 22,
  unit: 'sglang-k26',
  url: 'http://127.0.0.1:30001',
  sudo: false,
} as unknown as ServerProfile;
const unit = runningUnit({ mainPid: 7 });

const loading = (): LoadState => halfLoaded(unit);
const snap = (state: LoadState | undefined, extra: Partial<ServerSnapshot> = {}): ServerSnapshot => ({
  server,
  state,
  watching: true,
  loading: true,
  refusal: undefined,
  verification: undefined,
  ...extra,
});

describe('fleet report: one wording for agents and scripts', () => {
  it('a load under way: state, percentage, phase, since; text and JSON agree', () => {
    const r = serverReport(snap(loading()), 63_000);
    assert.equal(r.state, 'loading');
    assert.equal(r.progressPercent, 45);
    assert.equal(r.phase, 'loading weights');
    assert.equal(r.since, new Date(1000).toISOString());
    assert.match(r.summary, /^gpu1: loading 45% \(loading weights, 32\/64 shards\) · for 1m 2s$/);
  });

  it('a refusal is the state word, its message the last error', () => {
    const r = serverReport(
      snap(undefined, {
        watching: false,
        loading: false,
        refusal: { kind: 'host-key-changed', message: 'HOST KEY CHANGED for gpu1' },
      }),
    );
    assert.equal(r.state, 'host key changed');
    assert.equal(r.lastError, 'HOST KEY CHANGED for gpu1');
  });

  it('nothing watched: not watched, with what was last seen', () => {
    const r = serverReport(snap(loading(), { watching: false, loading: false }));
    assert.equal(r.state, 'not watched');
    assert.match(r.summary, /last seen loading 45%/);
    assert.equal(r.progressPercent, null);
  });

  it('a wait that timed out says to call again, never to restart', () => {
    const w = waitReport({ kind: 'timeout', snapshot: snap(loading()) }, 90_000, 'kimi_wait', 63_000);
    assert.equal(w.result, 'timeout');
    assert.match(
      w.next,
      /Still loading 45% after waiting 1m 30s: call kimi_wait again \(the load goes on; do not restart\)\./,
    );
  });

  it('a failure says why and not to wait again', () => {
    let s = loading();
    s = reduce(s, {
      kind: 'unit',
      at: 4000,
      unit: { ...unit, activeState: 'failed', subState: 'failed', mainPid: 0, result: 'exit-code', execMainStatus: 1 },
    });
    const w = waitReport({ kind: 'failed', snapshot: snap(s, { loading: false }) }, 5000);
    assert.match(w.next, /gpu1 failed: the service exited with status 1.*Do not wait again/);
  });
});

describe('standalone settings sources', () => {
  const base = { env: {}, platform: 'linux' as NodeJS.Platform, home: '/home/ada' };
  const files: Record<string, string> = {};
  const read = (f: string) => {
    if (!(f in files)) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
    return files[f]!;
  };
  const exists = (f: string) => f in files;

  it('default paths per platform', () => {
    assert.equal(defaultConfigFile(base), '/home/ada/.config/kimi-service/servers.json');
    assert.equal(defaultConfigFile({ ...base, env: { XDG_CONFIG_HOME: '/x' } }), '/x/kimi-service/servers.json');
    assert.equal(
      defaultVscodeSettingsFile({ ...base, platform: 'darwin' }),
      '/home/ada/Library/Application Support/Code/User/settings.json',
    );
  });

  it('--config: an array of servers, or kimi settings; comments allowed', () => {
    files['/c.json'] = '// mine\n[{ "name": "a", "host": "gpu1", "unit": "sglang" },]';
    const r = loadStandaloneSettings({ ...base, configFile: '/c.json' }, read, exists);
    assert.ok(r.ok);
    assert.equal(r.settings.servers[0]!.unit, 'sglang.service');
    files['/d.json'] =
      '{ "kimiService.servers": [{ "name": "b", "host": "gpu2", "unit": "u" }], "kimiService.hostKeyPolicy": "strict", "editor.fontSize": 14 }';
    const d = loadStandaloneSettings({ ...base, configFile: '/d.json' }, read, exists);
    assert.ok(d.ok && d.settings.hostKeyPolicy === 'strict');
  });

  it('the XDG file comes before flags, flags before VS Code settings; a bad source is an error naming it', () => {
    files['/home/ada/.config/Code/User/settings.json'] =
      '{ "kimiService.servers": [{ "name": "vs", "host": "h", "unit": "u" }] }';
    const vs = loadStandaloneSettings(base, read, exists);
    assert.ok(vs.ok && vs.settings.servers[0]!.name === 'vs');
    const flags = loadStandaloneSettings({ ...base, flags: { host: 'gpu9', unit: 'sglang' } }, read, exists);
    assert.ok(flags.ok && flags.settings.servers[0]!.host === 'gpu9' && flags.source === 'command-line flags');
    files['/home/ada/.config/kimi-service/servers.json'] = '[{ "name": "x", "host": "h", "unit": "bad unit; rm" }]';
    const bad = loadStandaloneSettings({ ...base, flags: { host: 'gpu9', unit: 'sglang' } }, read, exists);
    assert.ok(!bad.ok);
    assert.match(bad.errors.join(' '), /unit/);
    assert.equal(bad.source, '/home/ada/.config/kimi-service/servers.json');
    const missing = loadStandaloneSettings({ ...base, configFile: '/nope.json' }, read, exists);
    assert.ok(!missing.ok && /no such file/.test(missing.errors[0]!));
  });

  it('no person to ask: ask becomes strict', () => {
    assert.equal(nonInteractivePolicy('ask', false), 'strict');
    assert.equal(nonInteractivePolicy('ask', true), 'ask');
    assert.equal(nonInteractivePolicy('accept-new', false), 'accept-new');
  });
});

describe('fleet report: the cause of a failure', () => {
  it('is the exception line, not the echoes of the end', () => {
    assert.equal(
      causeLine([
        'Traceback (most recent call last):',
        'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.',
        'Received sigquit from a child process. It usually means the child failed.',
        'sglang-k26-ddtree.service: Main process exited, code=exited, status=1/FAILURE',
      ]),
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.',
    );
    assert.equal(causeLine(['something odd happened']), 'something odd happened');
    assert.equal(causeLine([]), undefined);
  });
});

describe('fleet report: a verification under way', () => {
  it('says where it is in the summary and in `verifying`, instead of the last result; none: no `verifying`', () => {
    const line = 'verifying 5/16 · reasoning (stream) waiting 42 s (1,830 tokens of reasoning so far, budget 2,048)';
    const r = serverReport(
      snap(loading(), {
        verification: 'Parsers verified for agents (16 checks)',
        verifying: { word: 'verifying 5/16', line, long: true },
      }),
      63_000,
    );
    assert.equal(r.verifying, line);
    assert.ok(r.summary.endsWith(` · ${line}`), r.summary);
    assert.equal(r.parsers, 'Parsers verified for agents (16 checks)');
    const done = serverReport(snap(loading(), { verification: 'Parsers verified for agents (16 checks)' }), 63_000);
    assert.equal('verifying' in done, false);
    assert.ok(done.summary.endsWith(' · Parsers verified for agents (16 checks)'), done.summary);
  });
});
