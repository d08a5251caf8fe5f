/** What a promise that must fail rejects with: the tests read the error's kind and words. */
import { strict as assert } from 'node:assert';
import { TransportError } from '../../src/transport/transport';

/** The error `p` rejects with; fails the test when `p` resolves. */
export async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof Error, String(err));
    return err;
  }
  assert.fail('expected a rejection');
}

/** The TransportError `p` rejects with; fails the test when `p` resolves or rejects with anything else. */
export async function transportRejection(p: Promise<unknown>): Promise<TransportError> {
  const err = await rejection(p);
  assert.ok(err instanceof TransportError, String(err));
  return err;
}
