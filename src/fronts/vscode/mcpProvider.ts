/**
 * The MCP server registered with VS Code (MCP server definition provider, stable since 1.101), so
 * agent mode lists the kimi tools with no file to write: the same bundled dist/mcp.js that "Kimi:
 * Copy MCP configuration" gives other clients, run by the Node of this extension host
 * (`process.execPath`; in VS Code desktop that is Electron, which ELECTRON_RUN_AS_NODE makes a
 * plain Node), so no `node` on PATH is needed.
 */
import * as vscode from 'vscode';
import { mcpEntryFor } from './mcpConfig';

/** contributes.mcpServerDefinitionProviders[].id */
export const MCP_PROVIDER_ID = 'kimiService.mcpServer';
export const MCP_SERVER_LABEL = 'Kimi Service';

export function mcpServerDefinition(context: vscode.ExtensionContext): vscode.McpStdioServerDefinition {
  const entry = mcpEntryFor(context);
  const version = String((context.extension.packageJSON as { version?: unknown }).version ?? '0.0.0');
  return new vscode.McpStdioServerDefinition(
    MCP_SERVER_LABEL,
    process.execPath,
    [...entry.args],
    { ELECTRON_RUN_AS_NODE: '1' },
    version,
  );
}

export function registerMcpServerProvider(context: vscode.ExtensionContext): vscode.Disposable {
  return vscode.lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, {
    provideMcpServerDefinitions: () => [mcpServerDefinition(context)],
  });
}
