#!/usr/bin/env bash
# Makes sure a Vulkan loader and at least one Vulkan driver are installed. Where none is (a
# machine without a GPU), installs Mesa's software driver lavapipe (`mesa-vulkan-drivers`)
# when it can (root or passwordless sudo); otherwise fails with the exact command to run.
# Sourced by scripts/test.sh and scripts/run.sh.
set -euo pipefail

have_loader() { ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; }
have_driver() {
  local d
  for d in /usr/share/vulkan/icd.d /etc/vulkan/icd.d /usr/local/share/vulkan/icd.d; do
    compgen -G "$d/*.json" >/dev/null && return 0
  done
  [[ -n ${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-} ]]
}

if have_loader && have_driver; then
  exit 0
fi

pkgs=(mesa-vulkan-drivers libvulkan1)
cmd="apt-get install -y --no-install-recommends ${pkgs[*]}"
if ! command -v apt-get >/dev/null; then
  echo "error: no Vulkan driver found and apt-get is not available; install a Vulkan driver" \
       "(on a machine without a GPU, Mesa's lavapipe) and its loader, then run again" >&2
  exit 1
fi
if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  sudo=(sudo)
else
  echo "error: no Vulkan driver found. Install Mesa's software Vulkan driver, then run again:" >&2
  echo "    sudo apt-get update && sudo $cmd" >&2
  exit 1
fi
echo "no Vulkan driver found: installing ${pkgs[*]} (Mesa lavapipe, software Vulkan)" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
have_loader && have_driver || { echo "error: installing ${pkgs[*]} did not provide a Vulkan driver" >&2; exit 1; }
