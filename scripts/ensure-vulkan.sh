#!/usr/bin/env bash
# Makes sure a Vulkan loader and at least one Vulkan driver are installed. Where none is (a
# machine without a GPU), installs Mesa's software driver lavapipe (`mesa-vulkan-drivers`)
# when it can (root or passwordless sudo); otherwise fails with the exact command to run.
# Sourced by scripts/test.sh and scripts/run.sh.
set -euo pipefail

# The loader: ldconfig's cache (ldconfig lives in /sbin, off a normal user's PATH on Debian),
# else the library in the usual directories.
have_loader() {
  local ldc d
  for ldc in ldconfig /sbin/ldconfig /usr/sbin/ldconfig; do
    if command -v "$ldc" >/dev/null && "$ldc" -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; then
      return 0
    fi
  done
  for d in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib /usr/local/lib; do
    [[ -e $d/libvulkan.so.1 ]] && return 0
  done
  return 1
}
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
bash "$(dirname "$0")/apt-install.sh" \
  "no Vulkan driver found (Mesa's lavapipe is a software one)" "${pkgs[@]}"
have_loader && have_driver || { echo "error: installing ${pkgs[*]} did not provide a Vulkan driver" >&2; exit 1; }
