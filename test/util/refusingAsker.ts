import type { UnknownHostKeyInfo } from '../../src/transport/ssh/sshOptions';

/**
 * The questions an SSH transport asks, answered as nobody there would: an unknown host key
 * rejected, no passphrase given. Each question is kept so a test can say what was asked.
 */
export function refusingAsker() {
  const asked: UnknownHostKeyInfo[] = [];
  const passphraseAsks: string[] = [];
  return {
    asked,
    passphraseAsks,
    questions: {
      decideUnknownHostKey: async (info: UnknownHostKeyInfo) => {
        asked.push(info);
        return 'reject' as const;
      },
      requestPassphrase: async (prompt: string) => {
        passphraseAsks.push(prompt);
        return undefined;
      },
    },
  };
}
