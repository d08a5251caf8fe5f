import assert from 'node:assert/strict';
import type * as vscode from 'vscode';
import { KeptPasswords } from '../../src/fronts/vscode/secrets/keptPasswords';

/** VS Code's SecretStorage and Memento as in-memory maps (the class only stores and reads through them). */
function stores(): { secrets: vscode.SecretStorage; state: vscode.Memento; secretMap: Map<string, string> } {
  const secretMap = new Map<string, string>();
  const stateMap = new Map<string, unknown>();
  const secrets = {
    get: async (k: string) => secretMap.get(k),
    store: async (k: string, v: string) => void secretMap.set(k, v),
    delete: async (k: string) => void secretMap.delete(k),
  } as unknown as vscode.SecretStorage;
  const state = {
    get: (k: string) => stateMap.get(k),
    update: async (k: string, v: unknown) => void stateMap.set(k, v),
    keys: () => [...stateMap.keys()],
  } as unknown as vscode.Memento;
  return { secrets, state, secretMap };
}

describe('kept SSH passwords', () => {
  it('kept: the password in secret storage, the host (only) in the list the forget command offers', async () => {
    const s = stores();
    const kept = new KeptPasswords(s.secrets, s.state);
    await kept.keep('gpu-b', 'pw-b');
    await kept.keep('gpu-a', 'pw-a');
    await kept.keep('gpu-a', 'pw-a2');
    assert.deepEqual(kept.hosts(), ['gpu-a', 'gpu-b']);
    assert.equal(await kept.get('gpu-a'), 'pw-a2');
    assert.ok(!JSON.stringify(s.state.get('kimiService.keptPasswordHosts')).includes('pw'), 'no password in state');
  });

  it('forgotten: gone from both, and a new window (another instance) agrees', async () => {
    const s = stores();
    await new KeptPasswords(s.secrets, s.state).keep('gpu-a', 'pw-a');
    const other = new KeptPasswords(s.secrets, s.state);
    await other.forget('gpu-a');
    assert.deepEqual(new KeptPasswords(s.secrets, s.state).hosts(), []);
    assert.equal(await other.get('gpu-a'), undefined);
    assert.equal(s.secretMap.size, 0);
  });

  it('a list spoilt in global state is read as what it holds of host names, never thrown on', async () => {
    const s = stores();
    await s.state.update('kimiService.keptPasswordHosts', ['gpu-a', 7, null]);
    assert.deepEqual(new KeptPasswords(s.secrets, s.state).hosts(), ['gpu-a']);
    await s.state.update('kimiService.keptPasswordHosts', 'gpu-a');
    assert.deepEqual(new KeptPasswords(s.secrets, s.state).hosts(), []);
  });
});
