/**
 * A server url that follows its job to the node it runs on (`http://{node}:30001`): `{node}` is
 * the scheduler's batch host, put in only once it is known and a plain host name (it becomes the
 * host the login node connects to). Pure.
 */
import { nodeNotHostName, urlWaitsForNode } from '../present/words/settingsWords';

export const NODE_PLACEHOLDER = '{node}';

/** A node name as it may go into a url: letters, digits, dots and dashes. */
const NODE_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/;

export function hasNodePlaceholder(url: string): boolean {
  return url.includes(NODE_PLACEHOLDER);
}

/** The url with `{node}` replaced by `node`, or why there is none yet (no node, or a name refused). */
export function urlForNode(template: string, node: string | undefined): { url: string } | { problem: string } {
  if (!hasNodePlaceholder(template)) return { url: template };
  if (node === undefined || node === '')
    return {
      problem: urlWaitsForNode(template),
    };
  if (!NODE_NAME.test(node))
    return {
      problem: nodeNotHostName(node.replace(/[^\x20-\x7e]/g, '?').slice(0, 80), template),
    };
  return { url: template.split(NODE_PLACEHOLDER).join(node) };
}
