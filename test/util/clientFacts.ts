import type { ClientFacts } from '../../src/transport/openssh/chooseClient';

/** A host that asks for nothing ssh2 cannot do. */
export const NO_CLIENT_FACTS: ClientFacts = {
  certificateFiles: [],
  certificatesBesideIdentities: [],
  agentCertificates: 0,
  markerLines: [],
  gssapiAuthentication: false,
  matchExec: false,
};
