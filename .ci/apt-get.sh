#!/usr/bin/env bash
# apt-get, waiting while another apt or dpkg holds the package lock (a fresh machine's
# unattended upgrades, or another install running), for up to ten minutes. Any other failure
# fails at once, with apt-get's own message.
#   .ci/apt-get.sh update -qq
#   .ci/apt-get.sh install -y -qq --no-install-recommends prometheus
set -uo pipefail
for _ in $(seq 60); do
  if out=$(DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=10 "$@" 2>&1); then
    exit 0
  fi
  if ! grep -qE "Could not get lock|Unable to lock|Could not open lock|Unable to acquire the dpkg" <<<"$out"; then
    printf '%s\n' "$out" >&2
    exit 1
  fi
  sleep 10
done
echo "apt-get $*: the package lock stayed held for ten minutes" >&2
exit 1
