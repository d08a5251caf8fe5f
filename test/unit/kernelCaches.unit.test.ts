import { strict as assert } from 'node:assert';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { kernelCacheCommand, parseKernelCaches, type KernelCacheFacts } from '../../src/host/kernelCaches';
import { foreseeCompiles } from '../../src/monitor/eta/compileForecast';
import { compileForecastAdvice, compileForecastText } from '../../src/present/compileForecastText';

const run = promisify(execFile);

const SGLANG = ['python3', '-m', 'sglang.launch_server', '--model-path', '/models/k2', '--tp', '8'];
const VLLM = ['vllm', 'serve', '/models/llama'];

function facts(over: Partial<KernelCacheFacts> = {}): KernelCacheFacts {
  return {
    readable: true,
    user: 'root',
    env: { HOME: '/root' },
    dirs: [
      { key: 'deepgemm-home', path: '/root/.cache/deep_gemm', exists: false, files: 0 },
      { key: 'deepgemm-xdg', path: '/root/.cache/sglang/deep_gemm', exists: false, files: 0 },
      { key: 'inductor-tmp', path: '/tmp/torchinductor_root', exists: false, files: 0 },
      { key: 'vllm-xdg', path: '/root/.cache/vllm/torch_compile_cache', exists: false, files: 0 },
    ],
    quantization: { method: 'fp8', blockSize: true },
    gpus: ['NVIDIA H100 80GB HBM3'],
    ...over,
  };
}

describe('kernel caches read before a restart (host/kernelCaches.ts, monitor/eta/compileForecast.ts)', () => {
  let child: ChildProcess | undefined;
  let dir: string | undefined;
  afterEach(() => {
    child?.kill();
    child = undefined;
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("reads the server process's own environment, its cache folders and the model's quantization, in one sh command", async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kc-'));
    const dg = path.join(dir, "dg cache 'x'");
    const model = path.join(dir, 'model');
    fs.mkdirSync(dg);
    fs.mkdirSync(model);
    fs.writeFileSync(
      path.join(model, 'config.json'),
      JSON.stringify(
        { model_type: 'kimi_k2', quantization_config: { quant_method: 'fp8', weight_block_size: [128, 128] } },
        null,
        2,
      ),
    );
    // a stand-in for the server: a process with the unit's environment
    child = spawn('sleep', ['60'], { env: { PATH: process.env['PATH'], HOME: dir, SGLANG_DG_CACHE_DIR: dg } });
    const pid = child.pid!;
    const read = async () => parseKernelCaches((await run('sh', ['-c', kernelCacheCommand(pid, model)])).stdout);
    let f = await read();
    assert.equal(f.readable, true);
    assert.equal(f.env.SGLANG_DG_CACHE_DIR, dg);
    assert.equal(f.env.HOME, dir);
    assert.deepEqual(f.quantization, { method: 'fp8', blockSize: true });
    assert.deepEqual(
      f.dirs.find((d) => d.key === 'deepgemm-env'),
      { key: 'deepgemm-env', path: dg, exists: true, files: 0 },
    );
    assert.equal(f.dirs.find((d) => d.key === 'deepgemm-home')?.path, path.join(dir, '.cache', 'deep_gemm'));
    assert.equal(f.user, os.userInfo().username);
    fs.writeFileSync(path.join(dg, 'kernel.so'), 'x');
    f = await read();
    assert.equal(f.dirs.find((d) => d.key === 'deepgemm-env')?.files, 1);
  });

  it("no HOME in the server's environment: the defaults are under its user's home (passwd), as Python's expanduser does", async () => {
    child = spawn('sleep', ['60'], { env: { PATH: process.env['PATH'] } });
    const f = parseKernelCaches((await run('sh', ['-c', kernelCacheCommand(child.pid!, undefined)])).stdout);
    assert.equal(f.env.HOME, undefined);
    assert.equal(
      f.dirs.find((d) => d.key === 'deepgemm-home')?.path,
      path.join(os.userInfo().homedir, '.cache', 'deep_gemm'),
    );
  });

  it('a process that cannot be read (gone) is unreadable: nothing is foreseen', async () => {
    const f = parseKernelCaches((await run('sh', ['-c', kernelCacheCommand(2 ** 22 + 17, undefined)])).stdout);
    assert.equal(f.readable, false);
    assert.deepEqual(foreseeCompiles(f, { engine: 'sglang', argv: SGLANG }).steps, []);
    assert.throws(() => kernelCacheCommand(0, undefined));
  });

  it('SGLang, block-FP8 on Hopper, both default DeepGEMM folders empty: a DeepGEMM compile foreseen, with its length and the advice', () => {
    const c = foreseeCompiles(facts(), { engine: 'sglang', argv: SGLANG });
    assert.deepEqual(
      c.steps.map((s) => [s.kind, s.dir, s.ms, s.from]),
      [['deepgemm', '/root/.cache/deep_gemm', 150_000, 'published logs']],
    );
    assert.match(
      compileForecastText(c) ?? '',
      /DeepGEMM kernel cache \(\/root\/\.cache\/deep_gemm\) is empty: .*about 2m 30s/,
    );
    assert.match(compileForecastAdvice(c) ?? '', /SGLANG_DG_CACHE_DIR/);
    assert.match(compileForecastAdvice(c) ?? '', /python3 -m sglang\.compile_deep_gemm/);
    assert.match(compileForecastAdvice(c) ?? '', /Docker volume/);
    // this server's previous loads timed it: their length
    const h = foreseeCompiles(facts(), { engine: 'sglang', argv: SGLANG, historyMs: { deepgemm: 400_000 } });
    assert.equal(h.steps[0]?.ms, 400_000);
    assert.equal(h.steps[0]?.from, 'history');
  });

  it('no DeepGEMM compile when it has kernels, is turned off, the model is not block-FP8, or the GPUs are older', () => {
    const none = (f: KernelCacheFacts) => foreseeCompiles(f, { engine: 'sglang', argv: SGLANG }).steps.length === 0;
    const withKernels = facts();
    assert.ok(
      none({
        ...withKernels,
        dirs: withKernels.dirs.map((d) => (d.key === 'deepgemm-xdg' ? { ...d, exists: true, files: 12 } : d)),
      }),
      'the newer default folder holds kernels',
    );
    assert.ok(none(facts({ env: { HOME: '/root', SGLANG_ENABLE_JIT_DEEPGEMM: '0' } })));
    assert.ok(none(facts({ quantization: { method: 'fp8', blockSize: false } })));
    assert.ok(none(facts({ gpus: ['NVIDIA A100-SXM4-80GB'] })));
    assert.ok(none(facts({ gpus: [] })), 'no GPU named: nothing claimed');
    // the unit's own folder decides, not the defaults
    const set = facts({
      env: { HOME: '/root', SGLANG_DG_CACHE_DIR: '/data/dg' },
      dirs: [
        { key: 'deepgemm-env', path: '/data/dg', exists: true, files: 0 },
        { key: 'deepgemm-home', path: '/root/.cache/deep_gemm', exists: true, files: 40 },
      ],
    });
    assert.equal(foreseeCompiles(set, { engine: 'sglang', argv: SGLANG }).steps[0]?.dir, '/data/dg');
  });

  it("SGLang's piecewise graphs and vLLM's torch.compile with empty caches; --enforce-eager compiles nothing", () => {
    const pw = foreseeCompiles(facts({ quantization: undefined }), {
      engine: 'sglang',
      argv: [...SGLANG, '--enable-piecewise-cuda-graph'],
    });
    assert.deepEqual(
      pw.steps.map((s) => [s.kind, s.dir]),
      [['piecewise-graphs', '/tmp/torchinductor_root']],
    );
    assert.match(compileForecastAdvice(pw) ?? '', /TORCHINDUCTOR_CACHE_DIR/);
    const v = foreseeCompiles(facts(), { engine: 'vllm', argv: VLLM });
    assert.deepEqual(
      v.steps.map((s) => [s.kind, s.dir]),
      [['torch-compile', '/root/.cache/vllm/torch_compile_cache']],
    );
    assert.match(compileForecastAdvice(v) ?? '', /VLLM_CACHE_ROOT/);
    assert.equal(foreseeCompiles(facts(), { engine: 'vllm', argv: [...VLLM, '--enforce-eager'] }).steps.length, 0);
  });
});
