// The load dashboard in a real VS Code (code-server + Chromium): during a load, palette "Kimi:
// Show load dashboard" -> the webview (an iframe inside an iframe) shows the phase and the
// progress, updating; the uPlot charts draw; hidden (another editor in its group) and shown
// again it restores its content; after ready, the parser verification result shows.
// Screenshots: the dashboard mid-load and after ready (dark theme, the default).
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { restartFromPalette, printResultsDir, simForLoad, useScenario, unitWithParsers } from './scenario';
import { dashboardFrame, runCommand, screenshot, waitForStatus } from './workbench';

after(printResultsDir);

const LOAD_SECONDS = 25;

interface DashboardView {
  title: string;
  verdict: string;
  figures: string;
  timeline: string[];
  warning: string;
  verification: string | null;
  /** The last load against the previous ones: its line and one text per phase row (null while hidden). */
  breakdown: { line: string; rows: string[]; bars: number } | null;
  /** Per chart: canvas size and how many pixels are drawn (alpha > 0). */
  charts: { id: string; width: number; height: number; drawn: number }[];
}

// A string, not a function: tsx/esbuild would wrap inner functions in a `__name` helper the page lacks.
const READ_VIEW = `(() => {
  const t = (id) => (document.getElementById(id)?.textContent || '').trim();
  const charts = ['rate', 'gpu'].map((id) => {
    const c = document.querySelector('#' + id + ' canvas');
    if (!c || !c.width || !c.height) return { id, width: c ? c.width : 0, height: c ? c.height : 0, drawn: 0 };
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let drawn = 0;
    for (let i = 3; i < d.length; i += 4) if (d[i] > 0) drawn++;
    return { id, width: c.width, height: c.height, drawn };
  });
  const vs = document.getElementById('verification-section');
  const bs = document.getElementById('breakdown-section');
  const breakdown = bs && !bs.hidden ? {
    line: t('breakdown-line'),
    rows: Array.from(document.querySelectorAll('#breakdown .phase-row')).map((r) => r.textContent),
    bars: document.querySelectorAll('#breakdown .phase-bars div.now').length,
  } : null;
  return {
    breakdown,
    title: t('title'),
    verdict: t('verdict'),
    figures: Array.from(document.querySelectorAll('#figures span')).map((s) => s.textContent).join(' | '),
    timeline: Array.from(document.querySelectorAll('#timeline div')).map((d) => d.textContent),
    warning: t('warning'),
    verification: vs && !vs.hidden ? t('verification') : null,
    charts,
  };
})()`;

async function readView(page: Page): Promise<DashboardView> {
  const f = await dashboardFrame(page);
  return (await f.evaluate(READ_VIEW)) as DashboardView;
}

async function waitForView(
  page: Page,
  what: string,
  ok: (v: DashboardView) => boolean,
  timeoutMs = 60_000,
): Promise<DashboardView> {
  const deadline = Date.now() + timeoutMs;
  let last: DashboardView | undefined;
  for (;;) {
    last = await readView(page).catch(() => last);
    if (last && ok(last)) return last;
    if (Date.now() > deadline) throw new Error(`dashboard never showed ${what}; last: ${JSON.stringify(last)}`);
    await page.waitForTimeout(250);
  }
}

const percentOf = (v: DashboardView) => Number(/(?:^| )(\d+)%/.exec(v.figures)?.[1] ?? NaN);

describe('e2e: load dashboard', function () {
  const scenario = useScenario({
    name: 'dashboard',
    gpuHost: { sim: { ...simForLoad(LOAD_SECONDS), kvSeconds: 1.5, cudaGraphSeconds: 1.5, warmupSeconds: 1.5 } },
    unitText: (h) => unitWithParsers(h),
    hostKeyPolicy: 'strict',
    knownHost: true,
    // the dark theme (VS Code's default; code-server starts light)
    settings: { 'workbench.colorTheme': 'Default Dark Modern' },
  });

  it('during a load: phase and progress update live, the charts draw, and it survives being hidden and shown', async () => {
    const page = scenario().page;
    await restartFromPalette(page, { keepRecorders: true });
    await waitForStatus(page, /Kimi: loading \d+%/, { timeoutMs: 60_000, failOn: /failed|unreachable/ });

    await runCommand(page, 'Show load dashboard');
    const first = await waitForView(
      page,
      'the weights loading with a rate',
      (v) =>
        /Phase: loading weights/.test(v.figures) &&
        Number.isFinite(percentOf(v)) &&
        /MB\/s/.test(v.figures) &&
        !/Shards 0\//.test(v.figures),
    );
    console.log(`    dashboard: ${JSON.stringify(first)}`);
    assert.match(first.title, /Kimi load · sim/);
    assert.equal(first.verdict, 'loading');
    assert.match(first.figures, /Shards \d+\/16/);
    assert.match(first.figures, /MB\/s/);
    assert.match(first.figures, /GPU [\d.]+ \/ \d+ GiB \(8 GPUs\)/);
    assert.ok(first.timeline.includes('loading weights'), `timeline: ${first.timeline}`);

    // live: the percentage grows without touching anything
    const later = await waitForView(page, 'a higher percentage', (v) => percentOf(v) >= percentOf(first) + 5, 30_000);
    assert.ok(percentOf(later) > percentOf(first));
    // the charts: uPlot canvases with something drawn on them (axes, grid, the series)
    const charts = (
      await waitForView(
        page,
        'both charts drawn',
        (v) => v.charts.every((c) => c.width > 100 && c.height > 50 && c.drawn > 500),
        20_000,
      )
    ).charts;
    console.log(`    charts: ${JSON.stringify(charts)}`);
    await screenshot(page, 'dashboard-loading', { settleMs: 600 });

    // hide it: another editor in the dashboard's group, then show it again by its tab
    const before = await dashboardFrame(page);
    const tab = page.locator('.tabs-container .tab', { hasText: 'Kimi load' });
    await tab.click();
    await runCommand(page, 'New Untitled Text File');
    await page.waitForFunction(
      () =>
        !!document.querySelector('.tabs-container .tab.active') &&
        !/Kimi load/.test(document.querySelector('.tabs-container .tab.active')!.textContent ?? ''),
      undefined,
      { timeout: 10_000 },
    );
    // hidden for real: the panel does not keep its context, so its page is gone
    for (let i = 0; i < 50 && !before.isDetached(); i++) await page.waitForTimeout(100);
    assert.ok(before.isDetached(), 'the hidden dashboard page was dropped (retainContextWhenHidden false)');
    await tab.click();
    const restored = await waitForView(
      page,
      'its content after being shown again',
      (v) =>
        v.title === first.title &&
        /Phase: /.test(v.figures) &&
        v.timeline.length > 0 &&
        v.charts.every((c) => c.drawn > 500),
      20_000,
    );
    console.log(`    restored: ${JSON.stringify(restored)}`);
    assert.ok(
      percentOf(restored) >= percentOf(later) || /Phase: (allocating|capturing|warming|ready)/.test(restored.figures),
      'no step back after being shown again',
    );
  });

  it('after ready: loaded-in time, the whole timeline, and the parser verification result', async () => {
    const page = scenario().page;
    await waitForStatus(page, /Kimi: ready/, { timeoutMs: 180_000, failOn: /failed|unreachable/ });
    const v = await waitForView(
      page,
      'the parser verification result',
      (x) => x.verdict === 'ready' && !!x.verification,
      90_000,
    );
    console.log(`    after ready: ${JSON.stringify(v)}`);
    assert.match(v.figures, /Loaded in \d+/);
    assert.match(v.figures, /100%/);
    for (const p of ['loading weights', 'allocating KV cache', 'warming up'])
      assert.ok(v.timeline.includes(p), `timeline has ${p}: ${v.timeline}`);
    assert.match(v.verification!, /verified|pass|ok/i);
    // the load explained: its line, and a bar per phase (a first load: nothing to compare with)
    assert.ok(v.breakdown, 'the breakdown section shows after ready');
    assert.match(v.breakdown.line, /^loaded in \d+s: (restart \d+s, )?weights \d+s .*; the first load on record here$/);
    assert.ok(
      v.breakdown.rows.some((r) => /^weights\d+s/.test(r)),
      `rows: ${v.breakdown.rows}`,
    );
    assert.equal(v.breakdown.bars, v.breakdown.rows.length);
    await screenshot(page, 'dashboard-ready', { settleMs: 600 });
  });
});
