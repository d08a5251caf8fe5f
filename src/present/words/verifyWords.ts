/** A request to a server that got no answer, in words. */

export function noAnswerWithin(seconds: number): string {
  return `no answer within ${seconds} s`;
}

export const CONNECTION_REFUSED = 'connection refused';
