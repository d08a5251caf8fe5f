import { strict as assert } from 'node:assert';
import { RingBuffer } from '../../src/util/ringBuffer';
import { dashboardModel, LoadSeries } from '../../src/fronts/vscode/dashboard/dashboardModel';
import { dashboardHtml, nonce } from '../../src/fronts/vscode/dashboard/dashboardHtml';
import { initialState, reduce } from '../../src/monitor/state/loadState';
import type { Signal } from '../../src/monitor/state/loadStateTypes';
import type { ServiceStatus } from '../../src/target/target';
import { runningUnit } from '../util/loadFixtures';

const unit: ServiceStatus = runningUnit({ mainPid: 7, execMainStartedAt: undefined });

describe('ring buffer', () => {
  it('keeps the newest `capacity` items, oldest first', () => {
    const r = new RingBuffer<number>(3);
    assert.deepEqual(r.toArray(), []);
    assert.equal(r.last(), undefined);
    for (let i = 1; i <= 5; i++) r.push(i);
    assert.deepEqual(r.toArray(), [3, 4, 5]);
    assert.equal(r.length, 3);
    assert.equal(r.last(), 5);
    r.clear();
    assert.equal(r.length, 0);
    r.push(9);
    assert.deepEqual(r.toArray(), [9]);
    assert.throws(() => new RingBuffer(0));
  });
});

describe('dashboard model', () => {
  it('records a series per load and builds the model', () => {
    const signals: Signal[] = [
      { kind: 'prior', at: 0, prior: { totalMsRange: [60_000, 90_000], loads: 4 } },
      { kind: 'restartRequested', at: 0 },
      { kind: 'attached', at: 1000, unit },
      { kind: 'journal', at: 2000, event: { type: 'phase', phase: 'loading weights' }, text: 'Load weight begin.' },
      { kind: 'io', at: 3000, readBytes: 1e8, totalBytes: 1e9 },
      { kind: 'io', at: 4000, readBytes: 2e8, totalBytes: 1e9 },
      { kind: 'gpu', at: 4000, usedMiB: 2048, totalMiB: 8192, perGpu: [] },
    ];
    const series = new LoadSeries(100);
    let s = initialState(0);
    for (const sig of signals) {
      s = reduce(s, sig);
      series.observe(s, sig.at);
    }
    const pts = series.points();
    assert.ok(pts.length >= 3);
    assert.equal(pts[pts.length - 1]!.gpuUsedGiB, 2);
    assert.ok(Math.abs(pts[pts.length - 1]!.rateMBps! - 100) < 1e-6);
    const m = dashboardModel({ server: 'gpu1', state: s, series: pts, now: 5000, verification: 'all 4 checks passed' });
    assert.equal(m.title, 'Kimi load · gpu1');
    assert.deepEqual(
      m.phases.map((p) => p.phase),
      ['starting', 'loading weights'],
    );
    assert.deepEqual(m.historyBand, { minMs: 60_000, maxMs: 90_000, loads: 4 });
    assert.ok(m.facts.some((f) => /Read 0.20 GB of 1.00 GB/.test(f)));
    assert.equal(m.verification, 'all 4 checks passed');
    assert.doesNotThrow(() => JSON.stringify(m));
    // a new load starts a new series
    series.observe({ ...initialState(10_000), restartRequestedAt: 10_000 }, 10_000);
    assert.equal(series.points().length, 1);
  });
  it('page HTML: strict CSP with a nonce on every script and no inline code without it', () => {
    const n = nonce();
    assert.match(n, /^[A-Za-z0-9]{16,}$/);
    const html = dashboardHtml({
      cspSource: 'vscode-webview://x',
      nonce: n,
      uplotJs: 'u.js',
      uplotCss: 'u.css',
      script: 'd.js',
      style: 'd.css',
    });
    assert.match(
      html,
      new RegExp(
        `default-src 'none'; img-src vscode-webview://x data:; script-src 'nonce-${n}'; style-src vscode-webview://x 'nonce-${n}'`,
      ),
    );
    const scripts = html.match(/<script[^>]*>/g)!;
    assert.equal(scripts.length, 2);
    for (const tag of scripts) assert.match(tag, new RegExp(`nonce="${n}"`));
    assert.doesNotMatch(html, /https?:\/\//);
  });
});
