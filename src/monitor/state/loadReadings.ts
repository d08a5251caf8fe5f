import { NOISE_SHARE, pushSample, RATE_WINDOW_MS, windowRate, type IoSample } from '../eta/ioRate';
import type { LoadState, Signal } from './loadStateTypes';
import { cpuCores, pushCpuSample } from './witnessMoves';
import { connectionLostBecause, connectionRestored } from '../../present/words/failureWords';

/** The host's readings (bytes read, GPU memory, CPU time) folded into the state, before `finish`. */
export function foldIo(state: LoadState, signal: Extract<Signal, { kind: 'io' }>): LoadState {
  const sample: IoSample = {
    at: signal.at,
    bytes: signal.readBytes,
    ...(signal.coldBytes !== undefined ? { coldBytes: signal.coldBytes } : {}),
  };
  const ioSamples = pushSample(state.ioSamples, sample);
  const prev = state.ioSamples[state.ioSamples.length - 1];
  let ioTotals = state.ioTotals;
  if (prev && signal.at > prev.at) {
    const dt = signal.at - prev.at;
    const dCold =
      prev.coldBytes !== undefined && sample.coldBytes !== undefined
        ? Math.max(0, sample.coldBytes - prev.coldBytes)
        : 0;
    const dWarm = Math.max(0, sample.bytes - prev.bytes - dCold);
    // An interval counts for the kind that did most of its reading, and only when that is more
    // than a trickle (sockets, imports after the weights would make a warm rate of ~0 MB/s).
    const model = signal.totalBytes ?? state.io?.totalBytes ?? state.prior?.totalBytes;
    const trickle = model !== undefined ? (model * NOISE_SHARE * dt) / RATE_WINDOW_MS : 0;
    if (dCold > trickle && dCold >= dWarm)
      ioTotals = { ...ioTotals, coldBytes: ioTotals.coldBytes + dCold, coldMs: ioTotals.coldMs + dt };
    else if (dWarm > trickle && dWarm > dCold)
      ioTotals = { ...ioTotals, warmBytes: ioTotals.warmBytes + dWarm, warmMs: ioTotals.warmMs + dt };
  }
  const totalBytes = signal.totalBytes ?? state.io?.totalBytes;
  const allRead =
    state.phase === 'loading weights' &&
    state.weightsReadAt === undefined &&
    totalBytes !== undefined &&
    totalBytes > 0 &&
    signal.readBytes >= totalBytes;
  return {
    ...state,
    ...(allRead ? { weightsReadAt: signal.at } : {}),
    io: {
      at: signal.at,
      readBytes: Math.max(signal.readBytes, state.io?.readBytes ?? 0),
      ...(signal.coldBytes !== undefined ? { coldBytes: signal.coldBytes } : {}),
      ...(totalBytes !== undefined ? { totalBytes } : {}),
    },
    ioSamples,
    ioTotals,
    readRate: windowRate(ioSamples),
  };
}

export function foldGpu(state: LoadState, signal: Extract<Signal, { kind: 'gpu' }>): LoadState {
  return {
    ...state,
    gpu: {
      at: signal.at,
      usedMiB: signal.usedMiB,
      totalMiB: signal.totalMiB,
      perGpu: signal.perGpu,
      ...(signal.utilPercent !== undefined ? { utilPercent: signal.utilPercent } : {}),
    },
    gpuPeakMiB: Math.max(state.gpuPeakMiB, signal.usedMiB),
  };
}

export function foldCpu(state: LoadState, signal: Extract<Signal, { kind: 'cpu' }>): LoadState {
  const cpuSamples = pushCpuSample(state.cpuSamples, { at: signal.at, seconds: signal.cpuSeconds });
  return {
    ...state,
    cpuSamples,
    cpu: { at: signal.at, seconds: signal.cpuSeconds, cores: cpuCores(cpuSamples) },
  };
}

/** The connection going down or coming back, and its log line; `forgetHttp` drops the last HTTP answer with it (during a load). */
export function foldConnection(
  state: LoadState,
  signal: Extract<Signal, { kind: 'connection' }>,
  forgetHttp: boolean,
): { next: LoadState; text: string } {
  const http = forgetHttp ? { http: undefined } : {};
  const next: LoadState = signal.up
    ? {
        ...state,
        connected: true,
        downSince: undefined,
        connectionError: undefined,
        connectionErrorKind: undefined,
        ...http,
      }
    : {
        ...state,
        connected: false,
        downSince: signal.at,
        connectionError: signal.error,
        connectionErrorKind: signal.errorKind,
        ...http,
      };
  return { next, text: signal.up ? connectionRestored() : connectionLostBecause(signal.error) };
}
