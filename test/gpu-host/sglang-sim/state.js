'use strict';
// State files under $KIMI_SIM_ROOT:
//   page-cache.json  {"files":{"/abs/model-00001-of-00064.safetensors": residentBytes, ...}}
//                    (bytes resident from the start of the file; size = fully resident)
//   gpu.json         {"pid":N,"updatedAt":ISO,"gpus":[{"index":0,"memoryUsedMiB":N,"memoryTotalMiB":81920},...]}
// Usable as a CLI too:  node state.js page-cache list|clear|mark FILE...|fincore FILE...
const fs = require('fs');
const path = require('path');

function writeJsonAtomic(file, obj) {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(obj));
  fs.renameSync(tmp, file);
}

function pageCachePath(root) { return path.join(root, 'page-cache.json'); }

function loadPageCache(root) {
  try {
    const j = JSON.parse(fs.readFileSync(pageCachePath(root), 'utf8'));
    const files = {};
    if (Array.isArray(j.files)) for (const f of j.files) files[f] = Infinity; // list form: fully resident
    else if (j.files && typeof j.files === 'object') Object.assign(files, j.files);
    return files;
  } catch { return {}; }
}

function savePageCache(root, files) {
  const out = {};
  for (const [k, v] of Object.entries(files)) if (v > 0) out[k] = v === Infinity ? Number.MAX_SAFE_INTEGER : v;
  writeJsonAtomic(pageCachePath(root), { files: out });
}

/** resident bytes of a file of `size` bytes, given the page-cache map */
function residentBytes(files, file, size) {
  const v = files[file];
  return v ? Math.min(size, v) : 0;
}

/**
 * Apply sim.json coldFiles to the map for the given model files ([{path,size}]).
 * "all": none resident; "none": all resident; [names]: those (basename or path) cold, the rest warm.
 */
function applyColdFiles(files, modelFiles, coldFiles) {
  if (coldFiles == null) return files;
  for (const f of modelFiles) {
    let cold;
    if (coldFiles === 'all') cold = true;
    else if (coldFiles === 'none') cold = false;
    else if (Array.isArray(coldFiles)) cold = coldFiles.includes(path.basename(f.path)) || coldFiles.includes(f.path);
    else continue;
    if (cold) delete files[f.path]; else files[f.path] = f.size;
  }
  return files;
}

function writeGpu(root, pid, usedMiB, totalMiB) {
  writeJsonAtomic(path.join(root, 'gpu.json'), {
    pid,
    updatedAt: new Date().toISOString(),
    gpus: usedMiB.map((m, i) => ({ index: i, memoryUsedMiB: Math.round(m), memoryTotalMiB: totalMiB })),
  });
}

module.exports = { writeJsonAtomic, loadPageCache, savePageCache, residentBytes, applyColdFiles, writeGpu, pageCachePath };

if (require.main === module) {
  const root = process.env.KIMI_SIM_ROOT;
  const [what, cmd, ...rest] = process.argv.slice(2);
  if (!root || what !== 'page-cache') {
    process.stderr.write('usage: KIMI_SIM_ROOT=DIR node state.js page-cache list|clear|mark FILE...|fincore FILE...\n');
    process.exit(2);
  }
  const files = loadPageCache(root);
  if (cmd === 'list') process.stdout.write(JSON.stringify(files, null, 1) + '\n');
  else if (cmd === 'clear') savePageCache(root, {});
  else if (cmd === 'mark') {
    for (const f of rest) { const p = path.resolve(f); files[p] = fs.statSync(p).size; }
    savePageCache(root, files);
  } else if (cmd === 'fincore') {
    // like `fincore --bytes --noheadings --raw --output RES,SIZE,FILE`
    for (const f of rest) {
      const p = path.resolve(f);
      const size = fs.statSync(p).size;
      process.stdout.write(`${residentBytes(files, p, size)} ${size} ${f}\n`);
    }
  } else { process.stderr.write(`unknown command ${cmd}\n`); process.exit(2); }
}
