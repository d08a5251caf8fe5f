/**
 * Which ssh_config directives are applied and which are only named (with why) in the notes the
 * transport logs; `Match` criteria ssh-config cannot evaluate.
 */
import { parse as parseSshConfig } from 'ssh-config';
import { directiveNotApplied } from '../../present/words/sshWords';

/** The directives this module applies (lowercase), and the section keywords. */
const APPLIED = new Set([
  'host',
  'match',
  'include',
  'hostname',
  'user',
  'port',
  'identityfile',
  'identitiesonly',
  'identityagent',
  'proxyjump',
  'proxycommand',
  'userknownhostsfile',
  'hashknownhosts',
  'connecttimeout',
  'serveraliveinterval',
  'serveralivecountmax',
]);

/** ssh_config(5) keywords, for naming what is not applied the way the user spells it. */
const KEYWORDS = [
  'AddKeysToAgent',
  'AddressFamily',
  'BatchMode',
  'BindAddress',
  'BindInterface',
  'CanonicalDomains',
  'CanonicalizeFallbackLocal',
  'CanonicalizeHostname',
  'CanonicalizeMaxDots',
  'CanonicalizePermittedCNAMEs',
  'CASignatureAlgorithms',
  'CertificateFile',
  'ChannelTimeout',
  'CheckHostIP',
  'Ciphers',
  'ClearAllForwardings',
  'Compression',
  'ConnectionAttempts',
  'ControlMaster',
  'ControlPath',
  'ControlPersist',
  'DynamicForward',
  'EnableEscapeCommandline',
  'EnableSSHKeysign',
  'EscapeChar',
  'ExitOnForwardFailure',
  'FingerprintHash',
  'ForkAfterAuthentication',
  'ForwardAgent',
  'ForwardX11',
  'ForwardX11Timeout',
  'ForwardX11Trusted',
  'GatewayPorts',
  'GlobalKnownHostsFile',
  'GSSAPIAuthentication',
  'GSSAPIDelegateCredentials',
  'HostbasedAcceptedAlgorithms',
  'HostbasedAuthentication',
  'HostKeyAlgorithms',
  'HostKeyAlias',
  'IgnoreUnknown',
  'IPQoS',
  'KbdInteractiveAuthentication',
  'KbdInteractiveDevices',
  'KexAlgorithms',
  'KnownHostsCommand',
  'LocalCommand',
  'LocalForward',
  'LogLevel',
  'LogVerbose',
  'MACs',
  'NoHostAuthenticationForLocalhost',
  'NumberOfPasswordPrompts',
  'ObscureKeystrokeTiming',
  'PasswordAuthentication',
  'PermitLocalCommand',
  'PermitRemoteOpen',
  'PKCS11Provider',
  'PreferredAuthentications',
  'ProxyUseFdpass',
  'PubkeyAcceptedAlgorithms',
  'PubkeyAcceptedKeyTypes',
  'PubkeyAuthentication',
  'RekeyLimit',
  'RemoteCommand',
  'RemoteForward',
  'RequestTTY',
  'RequiredRSASize',
  'RevokedHostKeys',
  'SecurityKeyProvider',
  'SendEnv',
  'SessionType',
  'SetEnv',
  'StdinNull',
  'StreamLocalBindMask',
  'StreamLocalBindUnlink',
  'StrictHostKeyChecking',
  'SyslogFacility',
  'Tag',
  'TCPKeepAlive',
  'Tunnel',
  'TunnelDevice',
  'UpdateHostKeys',
  'UseKeychain',
  'VerifyHostKeyDNS',
  'VisualHostKey',
  'XAuthLocation',
];
const KEYWORD_CASE = new Map(KEYWORDS.map((k) => [k.toLowerCase(), k]));

/** Match criteria ssh-config evaluates; a Match block using another one never applies. */
const MATCH_EVALUATED = new Set(['all', 'host', 'originalhost', 'user', 'localuser', 'final']);

/** The directives of `computed` this module does not apply, named for the log. */
export function unsupportedDirectives(computed: Readonly<Record<string, unknown>>): string[] {
  return Object.keys(computed)
    .filter((k) => !APPLIED.has(k.toLowerCase()))
    .map((k) => {
      const name = KEYWORD_CASE.get(k.toLowerCase()) ?? k;
      const why = directiveNotApplied(k.toLowerCase());
      return why ? `${name} (${why})` : name;
    });
}

/** `Match` criteria in the config that ssh-config cannot evaluate (exec, canonical, localnetwork, tagged...). */
export function unevaluatedMatchCriteria(configText: string): string[] {
  const out = new Set<string>();
  for (const line of parseSshConfig(configText)) {
    const l = line as { param?: string; criteria?: Record<string, unknown> };
    if (!l.param || l.param.toLowerCase() !== 'match' || !l.criteria) continue;
    for (const k of Object.keys(l.criteria)) if (!MATCH_EVALUATED.has(k.toLowerCase())) out.add(k.toLowerCase());
  }
  return [...out];
}
