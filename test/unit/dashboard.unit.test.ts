import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RingBuffer } from '../../src/util/ringBuffer';
import { dashboardModel, LoadSeries } from '../../src/fronts/vscode/dashboard/dashboardModel';
import { dashboardHtml, escapeHtml, nonce } from '../../src/fronts/vscode/dashboard/dashboardHtml';
import { dashboardWords } from '../../src/fronts/vscode/dashboard/dashboardWords';
import { useBundle, type L10nBundle } from '../../src/util/l10n';
import { initialState, reduce } from '../../src/monitor/state/loadState';
import type { Signal } from '../../src/monitor/state/loadStateTypes';
import type { ServiceStatus } from '../../src/target/target';
import { runningUnit } from '../util/loadFixtures';

const unit: ServiceStatus = runningUnit({ mainPid: 7, execMainStartedAt: undefined });

/** A load under way with every kind of figure: past loads, a phase, bytes read, GPU memory. */
const LOADING: Signal[] = [
  { kind: 'prior', at: 0, prior: { totalMsRange: [60_000, 90_000], loads: 4 } },
  { kind: 'restartRequested', at: 0 },
  { kind: 'tiedToRun', at: 1000, unit },
  { kind: 'journal', at: 2000, event: { type: 'phase', phase: 'loading weights' }, text: 'Load weight begin.' },
  { kind: 'io', at: 3000, readBytes: 1e8, totalBytes: 1e9 },
  { kind: 'io', at: 4000, readBytes: 2e8, totalBytes: 1e9 },
  { kind: 'gpu', at: 4000, usedMiB: 2048, totalMiB: 8192, perGpu: [] },
];

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
    const signals = LOADING;
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
      words: dashboardWords(),
      lang: 'en',
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

describe('dashboard words', () => {
  const ZH = JSON.parse(
    fs.readFileSync(path.join(__dirname, '..', '..', 'l10n', 'bundle.l10n.zh-cn.json'), 'utf8'),
  ) as L10nBundle;
  afterEach(() => useBundle(undefined));

  /** A load with every kind of figure: shards, bytes, GPU memory, an ETA, past loads. */
  function loadingModel() {
    const signals = LOADING;
    let s = initialState(0);
    for (const sig of signals) s = reduce(s, sig);
    return dashboardModel({ server: 'gpu1', state: s, series: [], now: 5000 });
  }
  const html = (lang: string) =>
    dashboardHtml({
      cspSource: 'vscode-webview://x',
      nonce: 'n0nce',
      uplotJs: 'u.js',
      uplotCss: 'u.css',
      script: 'd.js',
      style: 'd.css',
      words: dashboardWords(),
      lang,
    });

  it('English by default: the headings in the page, the templates and figures in the model', () => {
    const m = loadingModel();
    assert.equal(m.title, 'Kimi load · gpu1');
    assert.equal(m.verdictText, 'loading');
    assert.deepEqual(
      m.phases.map((p) => p.label),
      ['starting', 'loading weights'],
    );
    assert.equal(m.words.eta, 'ETA {0} left ({1})');
    assert.ok(m.facts.includes('Read 0.20 GB of 1.00 GB'), m.facts.join(' | '));
    const page = html('en');
    for (const heading of ['Phases', 'Read rate (MB/s)', 'GPU memory (GiB, all GPUs)', 'Parser verification'])
      assert.ok(page.includes(`<h2>${heading}</h2>`), heading);
    assert.match(page, /<html lang="en">/);
    assert.equal(dashboardModel({ state: undefined, series: [], now: 0 }).verdictText, 'not watched');
  });

  it('under the zh-cn bundle: every heading, template, figure and state word in Chinese; the CSP unchanged', () => {
    const english = html('en');
    useBundle(ZH);
    const m = loadingModel();
    assert.equal(m.title, 'Kimi 加载 · gpu1');
    assert.equal(m.verdict, 'loading', 'the badge keeps its style name');
    assert.equal(m.verdictText, '加载中');
    assert.deepEqual(
      m.phases.map((p) => [p.phase, p.label]),
      [
        ['starting', ZH['starting']],
        ['loading weights', '加载权重'],
      ],
    );
    assert.ok(m.facts.includes('已读 0.20 GB / 1.00 GB'), m.facts.join(' | '));
    assert.ok(m.facts.includes('显存 2.0 / 8 GiB（0 块 GPU）'), m.facts.join(' | '));
    // every template keeps the placeholders its page fills, and is in Chinese
    for (const [key, text] of Object.entries(m.words)) {
      if (key === 'rateUnit' || key === 'gpuUnit' || key === 'phaseTook') continue;
      assert.match(text, /[\u4e00-\u9fff]/, `${key}: ${text}`);
    }
    assert.equal(m.words.eta, '预计还需 {0}（依据：{1}）');
    assert.equal(dashboardModel({ state: undefined, series: [], now: 0 }).verdictText, '未监视');
    const page = html('zh-cn');
    for (const heading of ['阶段', '读取速率（MB/s）', '显存（GiB，所有 GPU）', '解析器验证'])
      assert.ok(page.includes(`<h2>${heading}</h2>`), heading);
    assert.doesNotMatch(page, /Phases|Read rate|GPU memory|Parser verification|Kimi load/);
    const csp = (p: string) => /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(p)![1];
    assert.equal(csp(page), csp(english));
  });

  it('a translation cannot write markup into the page: the words are escaped', () => {
    useBundle({ Phases: '<img src=x onerror=alert(1)>', 'Kimi load': 'a & "b"' });
    const page = html('zh-cn"><script>');
    assert.ok(page.includes('<h2>&#60;img src=x onerror=alert(1)&#62;</h2>'));
    assert.ok(page.includes('<title>a &#38; &#34;b&#34;</title>'));
    assert.ok(page.includes('<html lang="zh-cn&#34;&#62;&#60;script&#62;">'));
    assert.equal(page.match(/<script/g)!.length, 2);
    assert.equal(escapeHtml(`<>&"'`), '&#60;&#62;&#38;&#34;&#39;');
  });
});
