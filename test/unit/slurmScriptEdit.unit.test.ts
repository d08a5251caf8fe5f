import { strict as assert } from 'node:assert';
import { parserPlanner } from '../../src/engine/engine';
import { commandEnd, serverArgvOfScript } from '../../src/target/slurm/scriptArgv';
import { planScriptChange } from '../../src/target/slurm/scriptEdit';

const choice = { toolCallParser: 'kimi_k2', reasoningParser: 'kimi_k2' };
const FILE = '/home/kimi/serve/kimi.sbatch';
const FLAGS = ['--tool-call-parser', 'kimi_k2', '--reasoning-parser', 'kimi_k2'];

const script = `#!/bin/bash
#SBATCH --job-name=kimi-k26
#SBATCH --output=logs/%x-%j.out   # next to the script
module load cuda/12.4
srun --ntasks=1 python3 -m sglang.launch_server \\
  --model-path /models/Kimi-K2.6 \\
  --tp 8 --port 30001   # the port the url names
echo "server ended"
`;

describe('batch script: parser flags added to the server command', () => {
  it('after the last word of a continued command, before its comment; every other byte kept; read back the same', () => {
    const plan = planScriptChange(script, FILE, parserPlanner(choice));
    assert.equal(plan.kind, 'change');
    if (plan.kind !== 'change') return;
    assert.equal(plan.newText, script.replace('--tp 8 --port 30001   #', `--tp 8 --port 30001 ${FLAGS.join(' ')}   #`));
    assert.deepEqual(serverArgvOfScript(plan.newText), [
      'python3',
      '-m',
      'sglang.launch_server',
      '--model-path',
      '/models/Kimi-K2.6',
      '--tp',
      '8',
      '--port',
      '30001',
      ...FLAGS,
    ]);
    assert.match(plan.diff, /^-  --tp 8 --port 30001 {3}# the port/m);
    assert.match(plan.diff, /^\+  --tp 8 --port 30001 --tool-call-parser kimi_k2 --reasoning-parser kimi_k2 {3}#/m);
  });

  it('a server started in the background keeps its `&` after the flags; a vllm serve line too', () => {
    const bg = 'vllm serve /models/k --port 30001 &\nwait\n';
    const plan = planScriptChange(bg, FILE, parserPlanner(choice));
    assert.equal(plan.kind, 'change');
    if (plan.kind === 'change') {
      assert.match(plan.newText, /^vllm serve \/models\/k --port 30001 .*--tool-call-parser kimi_k2.* &\nwait\n$/);
      assert.equal(serverArgvOfScript(plan.newText).at(-1) !== '&', true);
    }
  });

  it('already there: nothing to change; other values of the same flags: by hand; no server command: said', () => {
    const withFlags = script.replace('--port 30001', `--port 30001 ${FLAGS.join(' ')}`);
    assert.equal(planScriptChange(withFlags, FILE, parserPlanner(choice)).kind, 'already-set');
    const other = script.replace('--port 30001', '--port 30001 --tool-call-parser qwen25');
    const refused = planScriptChange(other, FILE, parserPlanner(choice));
    assert.equal(refused.kind, 'unsupported');
    if (refused.kind === 'unsupported') assert.match(refused.reason, /other values: change them there by hand/);
    const none = planScriptChange('#!/bin/sh\nsleep 100\n', FILE, parserPlanner(choice));
    assert.equal(none.kind, 'unsupported');
    if (none.kind === 'unsupported') assert.match(none.reason, /no "python -m sglang.launch_server".*kimi\.sbatch/);
  });

  it("the command's end: before a comment outside quotes, before a lone trailing `&`, not inside `&&` or quotes", () => {
    assert.equal(commandEnd('a b  # c'), 3);
    assert.equal(commandEnd("a '#b' c"), 8);
    assert.equal(commandEnd('a b &'), 3);
    assert.equal(commandEnd('a && b'), 6);
    assert.equal(commandEnd('a#b'), 3);
  });
});
