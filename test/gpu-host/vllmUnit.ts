/**
 * The vLLM variant of the simulated host's unit (GpuHostOptions.engine 'vllm'): a `vllm` stand-in
 * that runs the simulator in vLLM mode (sglang-sim/vllm.js), and the ExecStart that serves the model with it.
 */
/**
 * Node flags of every simulator process. V8's memory reducer runs a GC ~8 s after start-up in an
 * idle process, and its worker threads wake the event loop through an eventfd: a few hundred
 * bytes of rchar in /proc/PID/io, which the extension reads as bytes read. A hung server (a
 * replayed hang, a hangAt fault) must move no witness at all.
 */
export const SIM_NODE_FLAGS = '--no-memory-reducer';

/** The stand-in `vllm` console script (a shell script, like SGLang's `python`) running `simMain` (the host's copy of sglang-sim/vllm.js). */
export function vllmStandIn(node: string, stateDir: string, simMain: string, quote: (s: string) => string): string {
  return `#!/bin/sh\nKIMI_SIM_ROOT="\${KIMI_SIM_ROOT:-${stateDir}}"\nexport KIMI_SIM_ROOT\nexec ${quote(node)} ${SIM_NODE_FLAGS} ${quote(simMain)} "$@"\n`;
}

/** `vllm serve MODEL ...` as the seed's vLLM unit would have it (no parser flags: Enable parsers adds them). */
export function vllmExecStartLines(vllmPath: string, modelPath: string, port: number): string[] {
  const model = /\s/.test(modelPath) ? `"${modelPath}"` : modelPath;
  return [
    `ExecStart=${vllmPath} serve ${model} --served-model-name /root/models/Kimi-K2.6 \\`,
    `    --tensor-parallel-size 8 --trust-remote-code --host 127.0.0.1 --port ${port}`,
  ];
}
