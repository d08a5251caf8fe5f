'use strict';
// The simulator's process, the same for SGLang (main.js) and vLLM (vllm.js): a refused command line
// exits as the Python server's argparse does, a published log is replayed, and a simulated server
// runs with the signals a Python server answers.
const fs = require('fs');
const { loadConfig } = require('./config');
const { writeAll } = require('./log');

/** The state folder the tests name (KIMI_SIM_ROOT), made if missing; null without one. */
function simRoot() {
  const root = process.env.KIMI_SIM_ROOT || null;
  if (root) {
    try {
      fs.mkdirSync(root, { recursive: true });
    } catch {
      /* ignore */
    }
  }
  return root;
}

/**
 * Runs `parsed` (an args.js or vllm-args.js result): `start(args, extra, cfg, root)` makes the sim
 * (undefined when it runs something else); `crashText(e)` is what an uncaught error writes;
 * `more(sim)` adds the engine's own signal handlers.
 */
function runSim(parsed, start, { crashText, more = () => undefined }) {
  if (!parsed.ok) {
    writeAll(parsed.exitCode === 0 ? 1 : 2, parsed.error + '\n');
    process.exit(parsed.exitCode);
  }
  const root = simRoot();
  const cfg = loadConfig(root);
  if (cfg.replay) return require('./replay').main(parsed.args, cfg, root); // a published log, played (replay.js)
  const sim = start(parsed.args, parsed.extra, cfg, root);
  if (!sim) return undefined;
  process.on('SIGTERM', () => sim.onSignal('SIGTERM'));
  process.on('SIGINT', () => sim.onSignal('SIGINT'));
  process.on('SIGHUP', () => sim.onSignal('SIGTERM'));
  more(sim);
  process.on('exit', () => sim.cleanup());
  process.on('uncaughtException', (e) => {
    writeAll(2, crashText(e));
    sim.exit(1);
  });
  sim.run().catch((e) => {
    writeAll(2, `RuntimeError: simulator error: ${(e && e.stack) || e}\n`);
    sim.exit(1);
  });
  return sim;
}

module.exports = { runSim };
