#!/usr/bin/env bash
# Capture: builds and installs that run out of disk space.
#
# Each case gets a small tmpfs for the duration of its run only (env_capture.py --tmpfs, a
# private mount namespace), used as TMPDIR, as the venv location or as the uv cache. The log
# starts with `df -h` of that mount so the size is visible.
set -u
. "$(dirname "$0")/env_lib.sh"
ensure_torch_venvs
ensure_venv "$VENV_BARE"
ensure_uv
ensure_pkgs
# private copies of the test packages, so that other capture scripts can build the originals meanwhile
rm -rf "$SCRATCH/diskpkgs"; mkdir -p "$SCRATCH/diskpkgs"
cp -r "$PKGS/tinycpp" "$PKGS/tinyext" "$SCRATCH/diskpkgs/"
rm -rf "$SCRATCH/diskpkgs/"*/build "$SCRATCH/diskpkgs/"*/dist
T="$SCRATCH/small"       # mount point of the small tmpfs
FIX_TMP="Free space or point TMPDIR at a disk with room (export TMPDIR=/path/with/space); check df -h for /tmp and the pip cache."

$CASE --slug pip-install-torch-venv-on-full-disk --cwd "$SCRATCH" --tmpfs "$T:400m" \
    --title "pip install torch into a venv on a filesystem with 400 MB free" \
    --cmd "df -h $T" \
    --cmd "$PYENV_PY -m venv $T/venv" \
    --cmd "$T/venv/bin/pip install --no-cache-dir torch==$TORCH_CPU" \
    --python "$VENV_CPU/bin/python" --tool "torch=" --cause disk_full \
    --key "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device" \
    --fix "Free space on the venv's filesystem (torch needs several GB unpacked) or create the venv on a larger disk."

$CASE --slug pip-install-flash-attn-small-tmpdir-verbose --cwd "$SCRATCH" --tmpfs "$T:4m" \
    --title "pip -v install flash-attn with TMPDIR on a 4 MB filesystem (the sdist download does not fit)" \
    --cmd "df -h $T" \
    --cmd "TMPDIR=$T $VENV_BARE/bin/pip install -v --no-cache-dir flash-attn==$FLASH_ATTN" \
    --python "$VENV_BARE/bin/python" --cause disk_full \
    --key "[Errno 28] No space left on device" \
    --fix "$FIX_TMP"

$CASE --slug tinycpp-gcc-tmpdir-full --cwd "$SCRATCH/diskpkgs/tinycpp" --tmpfs "$T:2m" \
    --title "building a torch CppExtension with TMPDIR on a 2 MB filesystem: g++ cannot write its temporary files" \
    --cmd "df -h $T" \
    --cmd "TMPDIR=$T MAX_JOBS=1 $VENV_CPU/bin/pip install --no-build-isolation ." \
    --python "$VENV_CPU/bin/python" --gcc --cause disk_full \
    --key "No space left on device" \
    --fix "$FIX_TMP"

$CASE --slug tinyext-nvcc-tmpdir-full --cwd "$SCRATCH/diskpkgs/tinyext" --tmpfs "$T:2m" \
    --title "setup.py build_ext of a torch CUDAExtension with TMPDIR on a 2 MB filesystem (g++ on the .cpp fails first)" \
    --cmd "df -h $T" \
    --cmd "TMPDIR=$T CUDA_HOME=$CUDA_DIR TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=1 $VENV_CU/bin/python setup.py build_ext --inplace" \
    --python "$VENV_CU/bin/python" --nvcc "$NVCC" --gcc --cause disk_full \
    --key "No space left on device" \
    --fix "$FIX_TMP"

$CASE --slug uv-cache-on-full-disk --cwd "$SCRATCH" --tmpfs "$T:5m" \
    --title "uv pip install numpy with the uv cache on a 5 MB filesystem" \
    --cmd "df -h $T" \
    --cmd "UV_CACHE_DIR=$T/uv-cache $UV pip install --python $VENV_BARE/bin/python numpy==2.4.6" \
    --python "$VENV_BARE/bin/python" --uv "$UV" --cause disk_full \
    --key "No space left on device (os error 28)" \
    --fix "Free space or move the uv cache to a larger disk (UV_CACHE_DIR=/path/with/space); uv cache prune removes unused entries."

# nvcc's own front end (cudafe++) writing its generated C++ file into a full TMPDIR
rm -rf "$SCRATCH/diskpkgs/makecu"; cp -r "$PKGS/makecu" "$SCRATCH/diskpkgs/"
$CASE --slug makefile-nvcc-cudafe-tmpdir-full --cwd "$SCRATCH/diskpkgs/makecu" --tmpfs "$T:1200k" \
    --title "make (nvcc 13.0) with TMPDIR on a 1.2 MB filesystem: cudafe++ cannot write its generated file" \
    --cmd "df -h $T" \
    --cmd "TMPDIR=$T make saxpy" \
    --nvcc "$NVCC" --gcc --cause disk_full \
    --key "catastrophic error: error while writing generated C++ file: No space left on device" \
    --fix "$FIX_TMP"
rm -rf "$SCRATCH/diskpkgs"
