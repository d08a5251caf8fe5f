/**
 * package.json's `contributes.languageModelTools`, generated from the tool definition
 * (scripts/lm-tools.ts writes it; a unit test checks that package.json holds exactly this). Pure.
 */
import { toJSONSchema } from 'zod/v4/core';
import { DESCRIPTIONS, INPUTS, LM_FACES, MCP_INPUTS, TOOL_NAMES, type ToolName } from './definition';

export interface LmToolContribution {
  readonly name: ToolName;
  readonly displayName: string;
  readonly toolReferenceName: ToolName;
  readonly canBeReferencedInPrompt: true;
  readonly icon: string;
  readonly userDescription: string;
  readonly modelDescription: string;
  readonly inputSchema: Record<string, unknown>;
}

/** The JSON Schema of a tool's input, as a caller writes it (defaults optional); no `$schema` line. */
export function inputJsonSchema(
  name: ToolName,
  inputs: typeof INPUTS | typeof MCP_INPUTS = INPUTS,
): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = toJSONSchema(inputs[name], { io: 'input' });
  return schema;
}

export function languageModelTools(): LmToolContribution[] {
  return TOOL_NAMES.map((name) => ({
    name,
    displayName: LM_FACES[name].displayName,
    toolReferenceName: name,
    canBeReferencedInPrompt: true,
    icon: LM_FACES[name].icon,
    userDescription: LM_FACES[name].userDescription,
    modelDescription: DESCRIPTIONS[name],
    inputSchema: inputJsonSchema(name),
  }));
}
