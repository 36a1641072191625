#!/usr/bin/env bash
# Assemble the extra CUDA toolkits the capture scripts need, in a scratch folder, without
# installing anything system-wide.
#
#   cuda-12.4   nvcc 12.4.131  Debian non-free `nvidia-cuda-toolkit` (sid/trixie, unpacked with dpkg -x)
#                              + PyPI nvidia-cuda-nvcc-cu12 / nvidia-cuda-runtime-cu12 / nvidia-cuda-cccl-cu12
#   cuda-11.8   nvcc 11.8.89   Debian non-free `nvidia-cuda-toolkit` (bookworm)
#                              + PyPI nvidia-cuda-nvcc-cu11 / nvidia-cuda-runtime-cu11
#   cuda-13.2   nvcc 13.2.86   PyPI only (from CUDA 13 on the nvidia-cuda-nvcc wheel ships nvcc itself);
#                              compiler, runtime and CCCL only: no cuBLAS/cuSPARSE headers
#   llvm-19     clang 19.1.7   Debian bookworm `clang-19` and its libraries (a host compiler newer than
#                              CUDA 11.8 and 12.4 accept), unpacked with dpkg -x
#
# Why Debian for 12.x/11.x: PyPI's nvidia-cuda-nvcc-cu12/-cu11 wheels carry ptxas, libnvvm,
# libdevice and the crt headers but no nvcc, cicc, cudafe++, fatbinary or nvlink. Debian's
# nvidia-cuda-toolkit package carries those binaries. Runtime headers, libcudart and CCCL come
# from the PyPI wheels; the static runtime and the math-library headers (cuBLAS, cuSPARSE, ...)
# are cut out of Debian's nvidia-cuda-dev (a ~0.8-0.9 GB download, deleted once unpacked).
#
# Each toolkit gets the layout torch.utils.cpp_extension and CMake expect from CUDA_HOME:
#   bin/nvcc bin/nvcc.profile bin/{cudafe++,ptxas,fatbinary,nvlink,bin2c,...} bin/crt/*.stub
#   nvvm/bin/cicc nvvm/lib64/libnvvm.so nvvm/libdevice/libdevice.10.bc
#   include/ (cuda_runtime.h, crt/host_config.h, ...)   lib64/ (libcudart.so*)
#
# apt runs with a private configuration (sources list, lists and cache under $TOOLCHAINS/apt),
# so the system's apt setup is neither read for sources nor changed.
#
# Usage: TOOLCHAINS=/path/to/scratch corpus/capture/assemble_toolkits.sh [12.4|11.8|13.2|clang19 ...]
set -euo pipefail

TOOLCHAINS=${TOOLCHAINS:-/work/scratch/toolchain}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
DEB_12_4="12.4.131~12.4.1-8.2+b1"      # nvidia-cuda-toolkit in Debian sid non-free
DEV_12_4="12.4.127~12.4.1-8.2+b1"      # nvidia-cuda-dev, same source package
DEB_11_8="11.8.89~11.8.0-5~deb12u1"    # nvidia-cuda-toolkit in Debian bookworm non-free
DEV_11_8="11.8.89~11.8.0-5~deb12u1"
if [ $# -gt 0 ]; then WANT=("$@"); else WANT=(12.4 11.8 13.2 clang19); fi

mkdir -p "$TOOLCHAINS"/{apt/lists/partial,apt/parts,apt/cache/archives/partial,debs,wheels}
cd "$TOOLCHAINS"

# --- private apt configuration -----------------------------------------------------------
cat > apt/sources.list <<EOF
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $DEBIAN_MIRROR bookworm main contrib non-free
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $DEBIAN_MIRROR trixie main contrib non-free
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $DEBIAN_MIRROR sid main contrib non-free
EOF
cat > apt/apt.conf <<EOF
Dir::Etc::SourceList "$TOOLCHAINS/apt/sources.list";
Dir::Etc::SourceParts "$TOOLCHAINS/apt/parts";
Dir::State::Lists "$TOOLCHAINS/apt/lists";
Dir::Cache "$TOOLCHAINS/apt/cache";
APT::Architecture "amd64";
EOF
export APT_CONFIG="$TOOLCHAINS/apt/apt.conf"

need_apt_update=1

# --- helpers ------------------------------------------------------------------------------
write_profile() {   # NVIDIA-style nvcc.profile, relative to the toolkit folder
  cat > "$1/bin/nvcc.profile" <<'EOF'

TOP              = $(_HERE_)/..

CICC_PATH        = $(TOP)/nvvm/bin
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice

LD_LIBRARY_PATH += $(TOP)/lib64:
PATH            += $(CICC_PATH):$(_HERE_):

INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)

LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64/stubs" "-L$(TOP)/lib64"

CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
EOF
}

unpack_wheel() {    # unpack_wheel <wheel> <subdir-inside-nvidia/> <dest>
  local tmp; tmp=$(mktemp -d)
  unzip -q -o "$1" -d "$tmp"
  cp -a "$tmp/nvidia/$2/." "$3/"
  rm -rf "$tmp"
}

assemble_debian() { # assemble_debian <ver> <toolkit deb ver> <dev deb ver> <cuXX> <nvcc wheel> <runtime wheel> [cccl wheel]
  local ver=$1 tk=$2 dev=$3 cu=$4 nvccw=$5 rtw=$6 cccl=${7:-}
  local dest="$TOOLCHAINS/cuda-$ver" x="$TOOLCHAINS/x-$ver"
  if [ $need_apt_update = 1 ]; then apt-get update -q; need_apt_update=0; fi
  (cd debs && apt-get download "nvidia-cuda-toolkit=$tk" "nvidia-cuda-dev=$dev")
  pip download -q --no-deps -d wheels "nvidia-cuda-nvcc-$cu==$nvccw" "nvidia-cuda-runtime-$cu==$rtw" \
      ${cccl:+"nvidia-cuda-cccl-$cu==$cccl"}
  rm -rf "$dest" "$x"; mkdir -p "$x" "$dest"/{bin,nvvm/bin,include,lib64}
  dpkg -x "debs/nvidia-cuda-toolkit_${tk}_amd64.deb" "$x"
  # driver and compiler binaries (Debian keeps the real nvcc and cicc in /usr/lib/nvidia-cuda-toolkit/bin)
  cp -a "$x"/usr/lib/nvidia-cuda-toolkit/bin/nvcc "$x"/usr/lib/nvidia-cuda-toolkit/bin/crt "$dest/bin/"
  cp -a "$x"/usr/lib/nvidia-cuda-toolkit/bin/cicc "$dest/nvvm/bin/"
  for b in cudafe++ ptxas fatbinary nvlink bin2c cu++filt cuobjdump nvdisasm nvprune __nvcc_device_query; do
    [ -e "$x/usr/bin/$b" ] && cp -a "$x/usr/bin/$b" "$dest/bin/"
  done
  # Debian's gcc/g++ wrappers and /etc/nvcc.profile are left out on purpose: the toolkit then
  # behaves like NVIDIA's own installer's and calls the gcc/g++ found on PATH.
  write_profile "$dest"
  # headers, libnvvm, libdevice and libcudart from the PyPI wheels
  unpack_wheel wheels/nvidia_cuda_nvcc_${cu}-${nvccw}-*.whl cuda_nvcc "$dest"
  unpack_wheel wheels/nvidia_cuda_runtime_${cu}-${rtw}-*.whl cuda_runtime "$dest"
  [ -n "$cccl" ] && unpack_wheel wheels/nvidia_cuda_cccl_${cu}-${cccl}-*.whl cuda_cccl "$dest"
  find "$dest" -name __init__.py -delete
  mv "$dest"/lib/* "$dest/lib64/" 2>/dev/null || true; rmdir "$dest/lib" 2>/dev/null || true
  (cd "$dest/lib64" && so=$(ls libcudart.so.* | head -1) && ln -sf "$so" libcudart.so)
  # From Debian's (very large) nvidia-cuda-dev package take only what the wheels lack: the
  # static runtime nvcc links executables against by default, and the library headers
  # (cublas_v2.h, cusparse.h, cusolverDn.h, ...) that ATen/cuda/CUDAContext.h includes.
  dpkg-deb --fsys-tarfile "debs/nvidia-cuda-dev_${dev}_amd64.deb" | tar -x -C "$x" --wildcards \
      './usr/lib/x86_64-linux-gnu/libcudadevrt.a' './usr/lib/x86_64-linux-gnu/libcudart_static.a' \
      './usr/lib/x86_64-linux-gnu/libculibos.a' './usr/include/*'
  cp "$x"/usr/lib/x86_64-linux-gnu/*.a "$dest/lib64/"
  cp -rn "$x"/usr/include/. "$dest/include/"
  rm -rf "$x" "debs/nvidia-cuda-dev_${dev}_amd64.deb"
  "$dest/bin/nvcc" --version
}

assemble_pypi13() { # assemble_pypi13 <ver> <wheel ver>: the CUDA 13 wheels ship nvcc itself
  local ver=$1 full=$2 dest="$TOOLCHAINS/cuda-$1" tmp
  pip download -q --no-deps -d wheels "nvidia-cuda-nvcc==$full" "nvidia-cuda-crt==$full" \
      "nvidia-nvvm==$full" "nvidia-cuda-runtime==$full" "nvidia-cuda-cccl==$full"
  rm -rf "$dest"; tmp=$(mktemp -d)
  for p in cuda_nvcc cuda_crt nvvm cuda_runtime cuda_cccl; do
    unzip -q -o wheels/nvidia_${p}-"$full"-*.whl -d "$tmp"
  done
  # they all install into nvidia/cu13/{bin,include,lib,nvvm}
  mv "$tmp/nvidia/cu13" "$dest"; rm -rf "$tmp"
  find "$dest" -name __init__.py -delete
  [ -e "$dest/lib64" ] || ln -s lib "$dest/lib64"
  (cd "$dest/lib" && { [ -e libcudart.so ] || ln -s "$(ls libcudart.so.* | head -1)" libcudart.so; })
  [ -e "$dest/bin/nvcc.profile" ] || write_profile "$dest"
  "$dest/bin/nvcc" --version
}

assemble_clang19() { # clang 19 from bookworm; its binary finds libclang-cpp/libLLVM via $ORIGIN/../lib
  local v="1:19.1.7-3~deb12u1" dest="$TOOLCHAINS/llvm-19" x="$TOOLCHAINS/x-clang19"
  if [ $need_apt_update = 1 ]; then apt-get update -q; need_apt_update=0; fi
  (cd debs && apt-get download "clang-19=$v" "libclang-cpp19=$v" "libllvm19=$v" "libclang-common-19-dev=$v")
  rm -rf "$dest" "$x"; mkdir -p "$x"
  for d in debs/clang-19_*deb12u1_amd64.deb debs/libclang-cpp19_*deb12u1_amd64.deb \
           debs/libllvm19_*deb12u1_amd64.deb debs/libclang-common-19-dev_*deb12u1_amd64.deb; do
    dpkg -x "$d" "$x"
  done
  mv "$x/usr/lib/llvm-19" "$dest"
  rm -f "$dest/lib/libclang-cpp.so.19.1"        # a link into /usr/lib/x86_64-linux-gnu
  mv "$x"/usr/lib/x86_64-linux-gnu/lib* "$dest/lib/"
  rm -rf "$x"
  "$dest/bin/clang++" --version
}

for v in "${WANT[@]}"; do
  case $v in
    12.4) assemble_debian 12.4 "$DEB_12_4" "$DEV_12_4" cu12 12.4.131 12.4.127 12.4.127.post1 ;;
    11.8) assemble_debian 11.8 "$DEB_11_8" "$DEV_11_8" cu11 11.8.89 11.8.89 11.8.89.post1 ;;
    13.2) assemble_pypi13 13.2 13.2.86 ;;
    clang19) assemble_clang19 ;;
    *) echo "unknown toolkit $v" >&2; exit 2 ;;
  esac
done
