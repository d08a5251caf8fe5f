/**
 * Everything of src/ the target conformance suite touches, in one place: the Target interface
 * and its factory (src/target/target.ts), the transport adapter the operations run through, the
 * one way a server's arguments change (the fleet's parser verbs, which every front calls), and
 * the sudoers rules the extension tells a user to install. When those move (turning the
 * Target's I/O into argv requests and argsEdit into an operation), this file follows them and
 * the suite stays as it is.
 */
export {
  targetFor,
  targetIo,
  TargetError,
  type LogEntry,
  type Target,
  type TargetIo,
  type TargetState,
} from '../../src/target/target';
export { enableParsersOn, rollbackParsersOn, type ArgsChangeUi } from '../../src/fleet/checks/parsers';
export { sudoersRules } from '../../src/target/systemd/sudoers';
export type { ArgsEditKind } from '../../src/target/argsEdit';
