#!/usr/bin/env bash
# Gathers what a machine without a package registry (the GPU machine: CUDA, g++, python3,
# meson and ninja, no Debian -dev packages) needs to build and run ddl, into one ignored
# folder that travels with the tree: Debian 12 packages fetched with `apt-get download` and
# unpacked (dpkg-deb -x), trimmed, laid out as DIR/{include,lib,bin,datasets}, with .pc files
# that find their folder by ${pcfiledir}, and DIR/env.sh that points pkg-config, the compilers
# and the loader at it. It does not install anything on this machine and never runs apt-get install.
# Usage: scripts/gpu_deps.sh [DIR]   (default .gpu-deps; see docs/cuda.md)
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-.gpu-deps}

# Build dependencies (headers, pkg-config files, link-time .so) and what they load at run
# time that the GPU machine may lack: libgloo0 needs hiredis and ibverbs (and libnl), not
# their headers, because ddl includes only gloo's own. zlib1g travels because Debian's
# libz.so points at it. pkgconf: meson's dependency() asks pkg-config.
packages=(libeigen3-dev catch2 libstb-dev libstb0 libgloo-dev libgloo0 libhiredis0.14 libibverbs1
          libnl-3-200 libnl-route-3-200 zlib1g-dev zlib1g libjpeg62-turbo-dev libjpeg62-turbo
          libcli11-dev nlohmann-json3-dev pkgconf-bin libpkgconf3 dataset-fashion-mnist)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
apt-cache show "${packages[@]}" >/dev/null 2>&1 || apt-get -o DPkg::Lock::Timeout=600 update -qq
(cd "$work" && apt-get download -qq "${packages[@]}" 2>&1 | grep -v "unsandboxed as root" || true)
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$work/root"; done
r=$work/root

rm -rf "$dest"
mkdir -p "$dest"/{include,lib/pkgconfig,bin,datasets}
# Headers: Eigen's unsupported/ modules are not used; jconfig.h joins jpeglib.h (Debian keeps
# it in the multiarch folder the compiler searches by itself, which a carried folder is not).
cp -a "$r"/usr/include/. "$dest/include/"
mv "$dest/include/x86_64-linux-gnu/jconfig.h" "$dest/include/"
rmdir "$dest/include/x86_64-linux-gnu"
rm -rf "$dest/include/eigen3/unsupported"
# Shared libraries from the three places Debian 12 puts them, into one lib/; no static ones.
for d in "$r/lib/x86_64-linux-gnu" "$r/usr/lib/x86_64-linux-gnu" "$r/usr/lib"; do
  find "$d" -maxdepth 1 \( -type f -o -type l \) -name '*.so*' -exec cp -a {} "$dest/lib/" \;
done
ln -sf libz.so.1 "$dest/lib/libz.so"  # Debian's is an absolute link into /lib
cp "$r/usr/bin/pkgconf" "$dest/lib/pkgconf"
# .pc files: their /usr paths become relative to the .pc file's own folder (lib/pkgconfig).
for pc in "$r"/usr/share/pkgconfig/*.pc "$r"/usr/lib/x86_64-linux-gnu/pkgconfig/*.pc; do
  sed -e 's|/lib/x86_64-linux-gnu|/lib|g' -e 's|=/usr$|=${pcfiledir}/../..|' \
      -e 's|/usr/include|${pcfiledir}/../../include|g' -e 's|/usr/lib|${pcfiledir}/..|g' \
      "$pc" >"$dest/lib/pkgconfig/$(basename "$pc")"
done
cp -a "$r/usr/share/datasets/fashion-mnist" "$dest/datasets/"

cat >"$dest/bin/pkg-config" <<'EOF'
#!/bin/sh
# pkgconf from Debian 12, with its library beside it.
lib=$(cd "$(dirname "$0")/../lib" && pwd)
LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec "$lib/pkgconf" "$@"
EOF
chmod +x "$dest/bin/pkg-config"

cat >"$dest/env.sh" <<'EOF'
# Sourced (bash) before configuring, building or running ddl on a machine without the Debian
# packages: pkg-config finds the carried .pc files, g++ and nvcc the headers (as system headers:
# C/CPLUS_INCLUDE_PATH act like -isystem, so -Werror ignores their warnings), the linker and the
# loader the libraries. Made by scripts/gpu_deps.sh.
DDL_GPU_DEPS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export DDL_GPU_DEPS
export PATH=$DDL_GPU_DEPS/bin:$PATH
export PKG_CONFIG_PATH=$DDL_GPU_DEPS/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
# -I flags for the carried include/ are dropped (as pkg-config drops -I/usr/include), so that
# folder stays a system one (below); the spelling is the one ${pcfiledir} expands to.
export PKG_CONFIG_SYSTEM_INCLUDE_PATH=$DDL_GPU_DEPS/lib/pkgconfig/../../include:/usr/include
export C_INCLUDE_PATH=$DDL_GPU_DEPS/include${C_INCLUDE_PATH:+:$C_INCLUDE_PATH}
export CPLUS_INCLUDE_PATH=$DDL_GPU_DEPS/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
export LIBRARY_PATH=$DDL_GPU_DEPS/lib${LIBRARY_PATH:+:$LIBRARY_PATH}
export LD_LIBRARY_PATH=$DDL_GPU_DEPS/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export DDL_FASHION_MNIST=$DDL_GPU_DEPS/datasets/fashion-mnist
EOF

(cd "$work" && ls *.deb) >"$dest/PACKAGES"
carry=$(du -sb "$dest" | cut -f1)
tree=$(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)
echo "gpu_deps: $dest holds $((carry / 1024 / 1024)) MiB ($carry bytes); the tracked tree $((tree / 1024 / 1024)) MiB;" \
  "together $(((carry + tree) / 1024 / 1024)) MiB of the 64 MiB a GPU run carries"
if [ $((carry + tree)) -gt $((60 * 1024 * 1024)) ]; then
  echo "gpu_deps: too big to carry with a margin (60 MiB)" >&2
  exit 1
fi
