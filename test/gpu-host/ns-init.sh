#!/bin/sh
# PID 1 of the simulated GPU host's namespaces. Started by harness.ts as
#   unshare --mount --pid --fork --mount-proc --kill-child sh ns-init.sh FIX
# It bind-mounts the fixture's unit folder over /etc/systemd/system (and PATH-preserving
# copies of /etc/profile and /root/.bashrc), the stand-ins over /usr/bin/systemctl and
# /usr/bin/journalctl (what the real sudo runs: it resets PATH to secure_path), the fixture's
# sudoers.d over /etc/sudoers.d and its copy of /etc/group over /etc/group (group membership of
# the login users, e.g. systemd-journal), a tmpfs over /run/sudo (sudo's timestamps), prints
# READY, then becomes a tiny init (perl):
#   - reaps every orphan that is reparented to it (the unit supervisors, sessions' leftovers);
#   - stays alive while its stdin (a pipe from the harness) is open: when the harness closes
#     it or dies, init exits and the kernel kills every process of the pid namespace.
# sshd is NOT started here: the harness starts/stops it inside these namespaces with
# `nsenter -t <init pid> -m -p`, so sshd can go away (a network drop) while the unit lives on.
set -e
FIX="$1"
[ -d "$FIX/etc/systemd/system" ] || { echo "ns-init: no $FIX/etc/systemd/system" >&2; exit 1; }
mount --make-rprivate / 2>/dev/null || true
mkdir -p /run/sshd /etc/systemd/system
mount --bind "$FIX/etc/systemd/system" /etc/systemd/system
if [ -f "$FIX/ns/profile" ] && [ -f /etc/profile ]; then mount --bind "$FIX/ns/profile" /etc/profile; fi
if [ -f "$FIX/ns/bashrc" ] && [ -f /root/.bashrc ]; then mount --bind "$FIX/ns/bashrc" /root/.bashrc; fi
# The stand-ins at the real programs' paths. Where a program is missing on this machine, /usr/bin
# gets a writable overlay (upper layer on a tmpfs of the namespace) to hold an empty file to bind onto.
for n in systemctl journalctl; do
  [ -e "/usr/bin/$n" ] && continue
  if ! mountpoint -q /usr/bin; then
    mkdir -p "$FIX/ns/usr-bin"
    mount -t tmpfs tmpfs "$FIX/ns/usr-bin"
    mkdir "$FIX/ns/usr-bin/upper" "$FIX/ns/usr-bin/work"
    mount -t overlay overlay -o "lowerdir=/usr/bin,upperdir=$FIX/ns/usr-bin/upper,workdir=$FIX/ns/usr-bin/work" /usr/bin ||
      { echo "ns-init: /usr/bin/$n is missing and /usr/bin cannot be overlaid" >&2; exit 1; }
  fi
  : > "/usr/bin/$n"
done
for n in systemctl journalctl; do mount --bind "$FIX/bin/$n" "/usr/bin/$n"; done
if [ -d "$FIX/ns/sudoers.d" ]; then mkdir -p /etc/sudoers.d && mount --bind "$FIX/ns/sudoers.d" /etc/sudoers.d; fi
if [ -f "$FIX/ns/group" ]; then mount --bind "$FIX/ns/group" /etc/group; fi
# sshd's PAM service for one-time codes (pamOath.ts), only when the harness wrote one.
if [ -f "$FIX/ns/pam-sshd" ] && [ -f /etc/pam.d/sshd ]; then mount --bind "$FIX/ns/pam-sshd" /etc/pam.d/sshd; fi
mkdir -p /run/sudo && mount -t tmpfs -o mode=0711 tmpfs /run/sudo
echo READY
exec perl -e '
  use strict; use warnings;
  $0 = "kimi-gpu-host-init";
  $SIG{TERM} = $SIG{INT} = $SIG{HUP} = sub { exit 0 };
  my $reader = fork();
  die "fork: $!" unless defined $reader;
  if ($reader == 0) { my $b; while (sysread(STDIN, $b, 4096)) {} exit 0; }
  open(STDIN, "<", "/dev/null");
  open(STDOUT, ">", "/dev/null");
  while (1) {
    my $p = wait();
    exit 0 if $p == $reader;
    sleep 1 if $p == -1;
  }
'
