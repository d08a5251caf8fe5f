#!/bin/sh
# Kimi Service's SSH_ASKPASS: runs askpass.js with the runtime of the extension that started ssh
# (Electron acts as Node only with ELECTRON_RUN_AS_NODE=1; Node ignores it). Both paths come
# from the master's environment, set by the transport.
ELECTRON_RUN_AS_NODE=1 exec "$KIMI_ASKPASS_RUNTIME" "$KIMI_ASKPASS_SCRIPT" "$@"
