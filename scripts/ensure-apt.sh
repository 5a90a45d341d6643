#!/usr/bin/env bash
# Install the Debian packages given as arguments when any is missing. Idempotent; needs root
# (CI runs as root). Without root and with packages missing, it says what to install and fails.
set -euo pipefail
missing=()
for pkg in "$@"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "missing Debian packages: ${missing[*]} — install them (sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# A package of another architecture (musl-dev:arm64, the musl the cross-built runtime links)
# needs that architecture known to dpkg (multiarch) before apt-get update lists its packages.
for pkg in "${missing[@]}"; do
  arch=${pkg##*:}
  [ "$arch" = "$pkg" ] && continue
  if [ "$arch" != "$(dpkg --print-architecture)" ] && ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
    dpkg --add-architecture "$arch"
  fi
done
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
