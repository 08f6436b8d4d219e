#!/usr/bin/env bash
# install-host-deps.sh: installs the Debian packages the build and the tests need.
# Idempotent: it installs only what is missing, and runs `apt-get update` first
# only when something is missing. Needs root (or sudo).
set -euo pipefail

# package -> why
PACKAGES=(
  qemu-system-x86   # boot the appliance (TCG)
  qemu-utils        # qemu-img for disk image tests
  socat             # one relay per guest connection (guestfwd cmd:) to the tests' servers
  zstd              # initramfs compression
  xorriso           # NoCloud seed ISOs
  mtools            # vfat images without mounting
  dosfstools        # mkfs.vfat
  e2fsprogs         # mke2fs -d for test disks
  fdisk             # sfdisk --json reads back the GPT the image build writes
  grub-pc-bin grub-efi-amd64-bin grub-common # the disk image's loaders (BIOS, UEFI); grub-editenv checks grubenv
  ovmf              # UEFI firmware for disk image boots
  linux-source      # kernel source for the minimal kernel
  build-essential bc flex bison libelf-dev libssl-dev cpio xz-utils # kernel build
  cmake             # cmake-js builds the native addon
  iproute2          # network namespaces in host tests
  dnsmasq-base      # DHCP server for host network tests
  protobuf-compiler libprotobuf-dev python3-protobuf python3-grpcio # an independent gRPC client (C-core) in the interop test
  python3-prometheus-client # the metrics test parses the endpoint with Prometheus's own text parser
  lz4               # compression comparisons in the boot notes
  zsh fish tmux     # the completion tests run each shell's own completion (zsh's in tmux, interactively)
  squashfs-tools    # mksquashfs: the system image (executable, addon, modules) read on demand
  umoci skopeo      # OCI image layouts and docker-save archives made by the field's own tools (image/oci tests)
  ntfs-3g           # mkntfs: a Windows disk (MBR + NTFS) in the device matrix
  libedit2 libgnutls30 libnettle8 libseccomp2 libcap2 # what the unpacked chronyd links against
  libcrypt1 libpcre2-8-0 libxxhash0 # and the unpacked lighttpd
)

# Servers the tests run that are unpacked into the cache, never installed: installed, each package
# would start a service on this host (chronyd would sync the host's clock with servers on the
# internet; lighttpd would listen on port 80). chronyd is the independent NTP server the time
# tests query; lighttpd is the program nobody here wrote that the appliance tests bake into an
# image from an OCI layout; docker-registry (Distribution) is the real registry images are pulled from in
# tests; prometheus scrapes the fleet test's machines.
# unpack_tool PACKAGE FILE: PACKAGE's files in the cache, FILE among them.
unpack_tool() {
  local pkg="$1" file="$2"
  local dir="${APPLIANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cosi-appliance}/tools/$pkg"
  if [ -e "$dir/$file" ]; then echo "host deps: $pkg present in $dir"; return; fi
  local tmp; tmp=$(mktemp -d); chmod 0755 "$tmp" # apt-get download writes as _apt
  (cd "$tmp" && apt-get download "$pkg" >/dev/null) || { $SUDO apt-get update -q && (cd "$tmp" && apt-get download "$pkg" >/dev/null); }
  mkdir -p "$dir" && dpkg-deb -x "$tmp"/"$pkg"_*.deb "$dir"
  rm -rf "$tmp"
  echo "host deps: $pkg unpacked into $dir"
}
unpack_tools() {
  unpack_tool chrony usr/sbin/chronyd
  unpack_tool lighttpd usr/sbin/lighttpd
  unpack_tool docker-registry usr/bin/docker-registry # the real OCI registry the registry client's tests pull from
  unpack_tool prometheus usr/bin/prometheus # the real scraper of the fleet test (installed, it would run as a service)
}

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

if [ ${#missing[@]} -eq 0 ]; then
  echo "host deps: all ${#PACKAGES[@]} packages present"
  unpack_tools
  exit 0
fi

echo "host deps: installing ${missing[*]}"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
unpack_tools
