#!/usr/bin/env bash
# `scripts/apt-install.sh WHY PACKAGE...`: installs Debian packages with apt-get as root or
# through passwordless sudo; otherwise fails with the exact command to run. Used by
# scripts/ensure-vulkan.sh (lavapipe) and scripts/web.sh (Chromium).
set -euo pipefail
why=$1
shift
cmd="apt-get install -y --no-install-recommends $*"
if ! command -v apt-get >/dev/null; then
  echo "error: $why, and apt-get is not available: install $* (or its equivalent), then run again" >&2
  exit 1
fi
if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  sudo=(sudo)
else
  echo "error: $why. Install the packages, then run again:" >&2
  echo "    sudo apt-get update && sudo $cmd" >&2
  exit 1
fi
echo "$why: installing $*" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@" >/dev/null
