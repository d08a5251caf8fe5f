/** Every check a verification runs, in the order of its report: written out here, not read from src/, so a test notices a check gone or renamed. */
export const ALL_CHECKS: readonly string[] = [
  'server flags',
  'reasoning',
  'reasoning (stream)',
  'thinking off',
  'tool calling',
  'tool calling (stream)',
  'tool round trip',
  'tool round trip (stream)',
  'reasoning carried through tool calls',
  'parallel tool calls',
  'parallel tool calls (stream)',
  'tool_choice required',
  'tool_choice required (stream)',
  'named tool choice',
  'named tool choice (stream)',
  'tool-call ids',
];
