/** A simulator's phases after the weights made near-instant (sim.json keys), for tests of one phase. */
export const QUICK_SIM = {
  initSeconds: 0.05,
  kvSeconds: 0.05,
  cudaGraphSeconds: 0.05,
  uvicornSeconds: 0.05,
  warmupSeconds: 0.1,
  warmupPollSeconds: 0.05,
} as const;
