#!/bin/sh
# Runs a command in the namespaces a systemd unit's sandbox gives it, as far as the tests need them (run as root):
# a mount namespace where /proc is a new procfs with ProtectProc=invisible and ProcSubset=pid (hidepid=invisible,
# subset=pid: only the unit's own processes, only their per-process folders), a PID namespace (that procfs needs
# one) and an IPC namespace (PrivateIPC=yes); and ProtectSystem=strict with ReadWritePaths= on the test's scratch
# folder: READONLY-ROOT read-only except the RW-PATHs. The command runs as a child of this script, not as PID 1
# (a unit's main process is not its namespace's init). SQLCipherKit's own test tool (CLITests/SystemdExampleTests).
#
#     unit-namespace.sh READONLY-ROOT [RW-PATH...] -- COMMAND [ARGUMENT...]
set -eu
if [ "${1:-}" != --inside ]; then
    exec /usr/bin/unshare --mount --pid --ipc --fork --propagation private "$0" --inside "$@"
fi
shift
mount -t proc -o nosuid,nodev,noexec,hidepid=invisible,subset=pid proc /proc
root=$1
shift
while [ "$1" != -- ]; do
    mount --bind "$1" "$1"
    shift
done
shift
# The writable folders first, then the root over them (recursively, so they stay), then only the root read-only.
mount --rbind "$root" "$root"
mount -o remount,bind,ro "$root"
"$@"
