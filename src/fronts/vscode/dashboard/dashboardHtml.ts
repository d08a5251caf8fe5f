/** The dashboard page's HTML and its CSP nonce. Pure. */
import * as crypto from 'node:crypto';
import type { DashboardWords } from './dashboardWords';

/** Text for HTML, as element content or a quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function nonce(): string {
  return crypto
    .randomBytes(18)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, '');
}

/** The page's HTML. Only our own scripts (by nonce) and styles (by origin or nonce) run. */
export function dashboardHtml(opts: {
  cspSource: string;
  nonce: string;
  uplotJs: string;
  uplotCss: string;
  script: string;
  style: string;
  /** The headings, in the display language (the page's script gets the rest with the model). */
  words: DashboardWords;
  /** VS Code's display language ("zh-cn"). */
  lang: string;
}): string {
  const { cspSource, nonce: n } = opts;
  const w = Object.fromEntries(
    Object.entries(opts.words).map(([k, v]) => [k, escapeHtml(v)]),
  ) as unknown as DashboardWords;
  const csp = `default-src 'none'; img-src ${cspSource} data:; script-src 'nonce-${n}'; style-src ${cspSource} 'nonce-${n}'; font-src ${cspSource};`;
  return `<!DOCTYPE html>
<html lang="${escapeHtml(opts.lang)}">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${opts.uplotCss}" nonce="${n}">
<link rel="stylesheet" href="${opts.style}" nonce="${n}">
<title>${w.title}</title>
</head>
<body>
<header><h1 id="title">${w.title}</h1><span id="verdict" class="verdict"></span></header>
<section id="summary">
  <div class="progress"><div id="bar"></div><div id="band" title="${w.historyBand}"></div></div>
  <div id="figures"></div>
  <div id="warning" class="warning" hidden></div>
</section>
<section><h2>${w.phasesHeading}</h2><div id="timeline" class="timeline"></div><div id="legend" class="legend"></div></section>
<section id="breakdown-section" hidden><h2 id="breakdown-heading"></h2><div id="breakdown-line"></div><div id="breakdown" class="breakdown"></div></section>
<section><h2>${w.rateHeading}</h2><div id="rate" class="chart"></div></section>
<section><h2>${w.gpuHeading}</h2><div id="gpu" class="chart"></div></section>
<section id="verification-section" hidden><h2>${w.verificationHeading}</h2><pre id="verification"></pre></section>
<script nonce="${n}" src="${opts.uplotJs}"></script>
<script nonce="${n}" src="${opts.script}"></script>
</body>
</html>`;
}
