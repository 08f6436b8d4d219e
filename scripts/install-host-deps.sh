#!/usr/bin/env bash
# install-host-deps.sh: installs the Debian packages the build and the tests need.
# Idempotent: it installs only what is missing, and runs `apt-get update` first
# only when something is missing. Needs root (or sudo).
set -euo pipefail

# package -> why
PACKAGES=(
  qemu-system-x86   # boot the appliance (TCG)
  qemu-utils        # qemu-img for disk image tests
  zstd              # initramfs compression
  xorriso           # NoCloud seed ISOs
  mtools            # vfat images without mounting
  dosfstools        # mkfs.vfat
  e2fsprogs         # mke2fs -d for test disks
  ovmf              # UEFI firmware for disk image boots
  linux-source      # kernel source for the minimal kernel
  build-essential bc flex bison libelf-dev libssl-dev cpio xz-utils # kernel build
  cmake             # cmake-js builds the native addon
  iproute2          # network namespaces in host tests
  dnsmasq-base      # DHCP server for host network tests
  protobuf-compiler libprotobuf-dev python3-protobuf python3-grpcio # an independent gRPC client (C-core) in the interop test
  lz4               # compression comparisons in the boot notes
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "host deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "host deps: installing ${missing[*]}"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
