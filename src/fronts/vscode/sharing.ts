/**
 * This window's part in the broker (docs/broker.md): it joins the machine's broker as soon as it
 * starts, and says when it has the focus (the window focused last tells its user that a load is
 * ready or failed).
 */
import * as vscode from 'vscode';
import type { BrokeredFleet } from '../../broker/brokeredFleet';

export function shareWatches(fleet: BrokeredFleet): vscode.Disposable {
  fleet.setFocused(vscode.window.state.focused);
  const focus = vscode.window.onDidChangeWindowState((state) => fleet.setFocused(state.focused));
  void fleet.share();
  return focus;
}
