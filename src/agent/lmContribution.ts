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
    displayName: `%${nlsKey(name, 'displayName')}%`,
    toolReferenceName: name,
    canBeReferencedInPrompt: true,
    icon: LM_FACES[name].icon,
    userDescription: `%${nlsKey(name, 'userDescription')}%`,
    modelDescription: DESCRIPTIONS[name],
    inputSchema: inputJsonSchema(name),
  }));
}

/** The package.nls.json key of a tool's text shown in the tools picker: kimi_verify_parsers → tool.verifyParsers.… */
function nlsKey(name: ToolName, field: 'displayName' | 'userDescription'): string {
  const short = name.replace(/^kimi_/, '').replace(/_(\w)/g, (_all, c: string) => c.toUpperCase());
  return `tool.${short}.${field}`;
}

/**
 * The English of the tools' picker texts, package.nls.json's entries for them. The model's texts
 * (modelDescription, the input schema) stay in package.json, in English: they are read by models.
 */
export function languageModelToolTexts(): Record<string, string> {
  return Object.fromEntries(
    TOOL_NAMES.flatMap((name) =>
      (['displayName', 'userDescription'] as const).map((field) => [nlsKey(name, field), LM_FACES[name][field]]),
    ),
  );
}
