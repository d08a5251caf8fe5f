#!/usr/bin/env node
'use strict';
// Stand-in for nvidia-smi: the CSV query form, from FIX/state/gpu.json (written by the simulator).
const path = require('path');
const c = require('../lib/common');

c.logExec('nvidia-smi', process.argv.slice(2));

const TOTAL = 81920;
const NAME = 'NVIDIA H100 80GB HBM3';
function gpus() {
  const j = c.readJson(path.join(c.STATE, 'gpu.json'), null);
  const list = j && Array.isArray(j.gpus) && j.gpus.length ? j.gpus : null;
  const out = [];
  for (let i = 0; i < 8; i++) {
    const g = (list && list.find((x) => x.index === i)) || (list && list[i]) || {};
    out.push({
      index: i,
      used: Math.round(g.memoryUsedMiB || 0),
      total: Math.round(g.memoryTotalMiB || TOTAL),
      util: Math.round(g.utilizationGpu || g.utilization || 0),
      name: g.name || NAME,
      uuid: `GPU-5a3f0c1e-7b2d-4e8f-9a1b-00000000000${i}`,
      temp: 34 + i,
      power: 70 + i,
    });
  }
  if (list && list.length > 8)
    for (let i = 8; i < list.length; i++)
      out.push({
        index: i,
        used: list[i].memoryUsedMiB || 0,
        total: list[i].memoryTotalMiB || TOTAL,
        util: 0,
        name: NAME,
        uuid: `GPU-x-${i}`,
        temp: 35,
        power: 70,
      });
  return out;
}

const FIELDS = {
  index: { h: 'index', v: (g) => String(g.index) },
  'memory.used': { h: 'memory.used [MiB]', v: (g, nu) => (nu ? `${g.used}` : `${g.used} MiB`) },
  'memory.total': { h: 'memory.total [MiB]', v: (g, nu) => (nu ? `${g.total}` : `${g.total} MiB`) },
  'memory.free': { h: 'memory.free [MiB]', v: (g, nu) => (nu ? `${g.total - g.used}` : `${g.total - g.used} MiB`) },
  name: { h: 'name', v: (g) => g.name },
  gpu_name: { h: 'name', v: (g) => g.name },
  uuid: { h: 'uuid', v: (g) => g.uuid },
  gpu_uuid: { h: 'uuid', v: (g) => g.uuid },
  'utilization.gpu': { h: 'utilization.gpu [%]', v: (g, nu) => (nu ? `${g.util}` : `${g.util} %`) },
  'temperature.gpu': { h: 'temperature.gpu', v: (g) => `${g.temp}` },
  'power.draw': { h: 'power.draw [W]', v: (g, nu) => (nu ? `${g.power}.00` : `${g.power}.00 W`) },
  'pci.bus_id': { h: 'pci.bus_id', v: (g) => `00000000:${(0x18 + g.index * 0x10).toString(16).toUpperCase()}:00.0` },
  count: { h: 'count', v: (_g, _nu, all) => String(all.length) },
};

const args = process.argv.slice(2);
let query = null;
let format = null;
let ids = null;
let loopMs = 0;
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  // -lms N / -l S (and --loop-ms= / --loop=): print the query again every interval until killed, like the real one.
  if (a === '-lms' || a === '--loop-ms') {
    loopMs = Number(args[++i]);
    continue;
  }
  if (a.startsWith('--loop-ms=')) {
    loopMs = Number(a.slice(10));
    continue;
  }
  if (a === '-l' || a === '--loop') {
    loopMs = Number(args[++i]) * 1000;
    continue;
  }
  if (a.startsWith('--loop=')) {
    loopMs = Number(a.slice(7)) * 1000;
    continue;
  }
  if (a.startsWith('--query-gpu=')) query = a.slice(12);
  else if (a === '--query-gpu') query = args[++i];
  else if (a.startsWith('--format=')) format = a.slice(9);
  else if (a === '--format') format = args[++i];
  else if (a.startsWith('--id=')) ids = a.slice(5).split(',');
  else if (a === '-i' || a === '--id') ids = String(args[++i]).split(',');
  else if (a === '-L' || a === '--list-gpus') {
    for (const g of gpus()) process.stdout.write(`GPU ${g.index}: ${g.name} (UUID: ${g.uuid})\n`);
    process.exit(0);
  }
}

let list = gpus();
if (ids) list = list.filter((g) => ids.includes(String(g.index)));

if (query) {
  if (!format || !/(^|,)csv(,|$)/.test(format)) {
    process.stdout.write('"--format=" switch is missing. Please use --format=csv\n'); // real wording differs slightly
    process.exit(2);
  }
  const opts = format.split(',');
  const noheader = opts.includes('noheader');
  const nounits = opts.includes('nounits');
  const fields = query
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);
  for (const f of fields) {
    if (!FIELDS[f]) {
      process.stdout.write(`Field "${f}" is not a valid field to query.\n\n`);
      process.exit(2);
    }
  }
  const render = () => {
    const now = ids ? gpus().filter((g) => ids.includes(String(g.index))) : gpus();
    let out = '';
    if (!noheader)
      out += fields.map((f) => (nounits ? FIELDS[f].h.replace(/ \[.*\]$/, '') : FIELDS[f].h)).join(', ') + '\n';
    for (const g of now) out += fields.map((f) => FIELDS[f].v(g, nounits, now)).join(', ') + '\n';
    if (require('../sglang-sim/hostile').isHostile(c.STATE)) out += require('../sglang-sim/hostile').garbageGpuText();
    return out;
  };
  if (loopMs > 0) {
    process.stdout.on('error', () => process.exit(0)); // the reader went away (EPIPE)
    const tick = () => process.stdout.write(render());
    tick();
    setInterval(tick, Math.max(10, loopMs));
  } else {
    process.stdout.write(render());
    process.exit(0);
  }
}
if (query) return;

// plain nvidia-smi: a short table
const d = new Date();
let t = `${d.toUTCString()}\n`;
t += '+-----------------------------------------------------------------------------------------+\n';
t += '| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |\n';
t += '|-----------------------------------------+------------------------+----------------------+\n';
t += '| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n';
t += '| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n';
t += '|=========================================+========================+======================|\n';
for (const g of list) {
  t += `| ${String(g.index).padStart(3)}  ${g.name.padEnd(25).slice(0, 25)}      On  | ${FIELDS['pci.bus_id'].v(g)} Off |                    0 |\n`;
  t += `| N/A   ${g.temp}C    P0            ${String(g.power).padStart(3)}W /  700W | ${`${g.used}MiB /  ${g.total}MiB`.padStart(22)} | ${`${g.util}%`.padStart(8)}      Default |\n`;
  t += '+-----------------------------------------+------------------------+----------------------+\n';
}
process.stdout.write(t);
