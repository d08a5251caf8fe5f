// Kimi load dashboard (webview). Receives {type:'model', model} and renders; posts {type:'ready'} on load.
(function () {
  'use strict';
  const vscode = acquireVsCodeApi();
  const $ = (id) => document.getElementById(id);
  const css = (name, fallback) => getComputedStyle(document.body).getPropertyValue(name).trim() || fallback;
  const PHASE_VARS = ['--vscode-charts-blue', '--vscode-charts-purple', '--vscode-charts-orange', '--vscode-charts-yellow', '--vscode-charts-green', '--vscode-charts-green'];
  const PHASES = ['starting', 'loading weights', 'allocating KV cache', 'capturing CUDA graphs', 'warming up', 'ready'];
  let charts = {};
  let last = vscode.getState() && vscode.getState().model;

  // a template of the model's words ("ETA {0} left ({1})") with its figures
  function fill(template, ...args) {
    return String(template).replace(/\{(\d+)\}/g, (all, i) => (args[i] !== undefined ? String(args[i]) : all));
  }

  function fmtDur(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    const m = Math.floor(s / 60);
    return m > 0 ? `${m}m ${s % 60}s` : `${s}s`;
  }

  // x axis: the whole load so far (at least a minute), not just the span of the points (one point = a
  // millisecond axis); y axis from 0, [0, 1] while there is no value yet
  function chart(key, el, label, colorVar, values, xs, x0, x1) {
    const width = Math.max(200, el.clientWidth || document.body.clientWidth - 40);
    const data = [xs, values];
    if (charts[key] && charts[key].width === width) {
      charts[key].bounds.x0 = x0;
      charts[key].bounds.x1 = x1;
      charts[key].plot.setData(data);
      return;
    }
    const bounds = { x0, x1 };
    if (charts[key]) charts[key].plot.destroy();
    el.textContent = '';
    const fg = css('--vscode-foreground', '#ccc');
    const grid = css('--vscode-widget-border', 'rgba(128,128,128,0.2)') || 'rgba(128,128,128,0.2)';
    const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } };
    const plot = new uPlot({
      width,
      height: 180,
      scales: {
        x: { time: true, range: (u, min, max) => [Math.min(bounds.x0, min ?? bounds.x0), Math.max(bounds.x1, max ?? bounds.x1)] },
        y: { range: (u, min, max) => [0, max > 0 ? max * 1.1 : 1] },
      },
      axes: [axis, { ...axis, size: 50 }],
      series: [{}, { label, stroke: css(colorVar, '#3794ff'), width: 2, fill: fillOf(css(colorVar, '#3794ff')), spanGaps: true }],
      // one series, named by the section title: no legend row of "--" values
      legend: { show: false },
    }, data, el);
    charts[key] = { plot, width, bounds };
  }

  /** a translucent fill from a theme colour (#rgb, #rrggbb, #rrggbbaa or rgb()/rgba()) */
  function fillOf(color) {
    const c = color.trim();
    let m = /^#([0-9a-f]{3})$/i.exec(c);
    if (m) return '#' + m[1].split('').map((h) => h + h).join('') + '22';
    m = /^#([0-9a-f]{6})([0-9a-f]{2})?$/i.exec(c);
    if (m) return '#' + m[1] + '22';
    m = /^rgba?\(([^,]+),([^,]+),([^,)]+)/i.exec(c);
    if (m) return `rgba(${m[1]},${m[2]},${m[3]},0.13)`;
    return 'transparent';
  }

  function render(m) {
    if (!m || !m.words) return;
    const w = m.words;
    $('title').textContent = m.title;
    const v = $('verdict');
    v.textContent = m.verdictText;
    v.className = `verdict ${(m.verdict || '').replace(/\s/g, '-')}`;
    const pct = m.progress != null ? Math.floor(m.progress * 100) : null;
    $('bar').style.width = `${pct ?? 0}%`;
    const figs = [];
    if (m.phase) figs.push(fill(w.phase, (m.phases.find((p) => p.phase === m.phase) || {}).label || m.phase));
    if (pct != null) figs.push(`${pct}%`);
    if (m.startedAt) figs.push(fill(m.readyAt ? w.loadedIn : w.elapsed, fmtDur((m.readyAt || m.now) - m.startedAt)));
    if (m.etaAt && !m.readyAt) figs.push(fill(w.eta, fmtDur(m.etaAt - m.now), m.etaBasis));
    for (const f of m.facts) figs.push(f);
    const band = $('band');
    if (m.historyBand && m.startedAt) {
      figs.push(fill(w.history, fmtDur(m.historyBand.minMs), fmtDur(m.historyBand.maxMs), m.historyBand.loads));
      // the band on the progress bar: where, in elapsed time, past loads were done (relative to the longest)
      const scale = Math.max(m.historyBand.maxMs, (m.readyAt || m.now) - m.startedAt) * 1.05;
      band.style.display = 'block';
      band.style.left = `${(m.historyBand.minMs / scale) * 100}%`;
      band.style.width = `${Math.max(0.5, ((m.historyBand.maxMs - m.historyBand.minMs) / scale) * 100)}%`;
    } else band.style.display = 'none';
    $('figures').replaceChildren(...figs.map((t) => Object.assign(document.createElement('span'), { textContent: t })));
    const warning = $('warning');
    warning.hidden = !m.warning;
    warning.textContent = m.warning || '';

    // phase timeline
    const tl = $('timeline');
    const legend = $('legend');
    const end = m.readyAt || m.now;
    const start = m.startedAt || (m.phases[0] && m.phases[0].at) || end;
    const span = Math.max(1, end - start);
    tl.replaceChildren();
    legend.replaceChildren();
    // from the restart to the first phase the old process stops and the new one starts
    if (m.phases[0] && m.phases[0].at > start) {
      const d = document.createElement('div');
      d.className = 'pre';
      d.style.width = `${((m.phases[0].at - start) / span) * 100}%`;
      d.title = fill(w.restarting, fmtDur(m.phases[0].at - start));
      tl.appendChild(d);
    }
    m.phases.forEach((p, i) => {
      if (p.phase === 'ready') return;
      const next = m.phases[i + 1] ? m.phases[i + 1].at : end;
      const d = document.createElement('div');
      const idx = PHASES.indexOf(p.phase);
      d.style.width = `${(Math.max(0, next - p.at) / span) * 100}%`;
      d.style.background = css(PHASE_VARS[idx] || PHASE_VARS[0], '#3794ff');
      d.textContent = p.label;
      d.title = fill(w.phaseTook, p.label, fmtDur(next - p.at));
      tl.appendChild(d);
      legend.appendChild(Object.assign(document.createElement('span'), { textContent: `${p.label} ${fmtDur(next - p.at)}` }));
    });

    const xs = m.series.map((p) => p.t / 1000);
    const x0 = (m.startedAt || (xs[0] ? xs[0] * 1000 : m.now)) / 1000;
    // while loading, room for a minute at least; once ready, exactly the load
    const x1 = m.readyAt ? Math.max(m.readyAt / 1000, x0 + 1) : Math.max(m.now / 1000, x0 + 60);
    chart('rate', $('rate'), w.rateUnit, '--vscode-charts-blue', m.series.map((p) => p.rateMBps), xs, x0, x1);
    chart('gpu', $('gpu'), w.gpuUnit, '--vscode-charts-purple', m.series.map((p) => p.gpuUsedGiB), xs, x0, x1);

    renderBreakdown(m.breakdown, w);

    const vs = $('verification-section');
    vs.hidden = !m.verification;
    $('verification').textContent = m.verification || '';
  }

  // per phase: this load's bar, then one thin bar per previous load (newest first), all on one scale
  function renderBreakdown(b, w) {
    const section = $('breakdown-section');
    section.hidden = !b;
    const box = $('breakdown');
    box.replaceChildren();
    if (!b) return;
    $('breakdown-heading').textContent = b.heading;
    $('breakdown-line').textContent = b.line;
    for (const r of b.rows) {
      const row = document.createElement('div');
      row.className = 'phase-row';
      const label = Object.assign(document.createElement('span'), { className: 'phase-label', textContent: r.label });
      const bars = document.createElement('div');
      bars.className = 'phase-bars';
      const bar = (ms, cls, title) => {
        const d = document.createElement('div');
        d.className = cls;
        d.style.width = `${Math.max(0.5, (ms / b.scaleMs) * 100)}%`;
        d.title = title;
        bars.appendChild(d);
      };
      bar(r.ms, 'now', fill(w.thisLoad, fmtDur(r.ms)));
      r.previousMs.forEach((ms, i) => bar(ms || 0, 'then', ms == null ? fill(w.loadBeforeNone, i + 1) : fill(w.loadBefore, i + 1, fmtDur(ms))));
      const text = Object.assign(document.createElement('span'), { className: 'phase-text', textContent: r.text });
      row.append(label, bars, text);
      box.appendChild(row);
    }
  }

  window.addEventListener('message', (event) => {
    const msg = event.data;
    if (msg && msg.type === 'model') {
      last = msg.model;
      vscode.setState({ model: last });
      render(last);
    }
  });
  window.addEventListener('resize', () => { charts = Object.fromEntries(Object.entries(charts).map(([k, c]) => [k, { ...c, width: -1 }])); render(last); });
  // theme changes swap the CSS variables: rebuild the charts with the new colours
  new MutationObserver(() => { for (const c of Object.values(charts)) c.plot.destroy(); charts = {}; render(last); })
    .observe(document.body, { attributes: true, attributeFilter: ['class'] });
  render(last);
  vscode.postMessage({ type: 'ready' });
})();
