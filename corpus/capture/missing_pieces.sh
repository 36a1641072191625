#!/usr/bin/env bash
# Capture two kinds of missing pieces that need no toolkit beyond this machine's nvcc:
#   nvcc told to use a host compiler that is not installed (-ccbin gcc-6.3.0, -ccbin /opt/gcc-9/bin/g++
#   under make): "Failed to preprocess host compiler properties";
#   a superproject recording a submodule commit its remote never got (local repositories, file
#   transport): "Fetched in submodule path ..., but it did not contain ...", by `git submodule
#   update --init` and by `git clone --recurse-submodules`.
# Usage: WORK=/path/to/scratch corpus/capture/missing_pieces.sh
set -u
. "$(dirname "$0")/lib.sh"
W="$WORK/missing_pieces"; rm -rf "$W"; mkdir -p "$W"
export GIT_AUTHOR_NAME=dev GIT_AUTHOR_EMAIL=dev@example.invalid GIT_COMMITTER_NAME=dev GIT_COMMITTER_EMAIL=dev@example.invalid

mkdir -p "$W/kernel" && cd "$W/kernel"
printf '__global__ void fill(float *x) { x[threadIdx.x] = 1.0f; }\n' > fill.cu
printf 'NVCC_FLAGS = -ccbin /opt/gcc-9/bin/g++ -arch=sm_80\nfill.o: fill.cu\n\tnvcc $(NVCC_FLAGS) -c fill.cu -o fill.o\n' > Makefile
log="$RAW/nvcc-ccbin-gcc-not-installed.log"; : > "$log"
run_logged "$log" "nvcc --version"
run_logged "$log" "nvcc -ccbin gcc-6.3.0 -O2 -c fill.cu -o fill.o"
publish "$log" nvcc-ccbin-gcc-not-installed
log="$RAW/make-nvcc-ccbin-path-not-installed.log"; : > "$log"
run_logged "$log" "make"
publish "$log" make-nvcc-ccbin-path-not-installed

cd "$W" && git init -q -b main vendored && (cd vendored && echo v1 > VERSION && git add VERSION && git commit -qm v1)
git init -q -b main project && cd project
git -c protocol.file.allow=always submodule add -q ../vendored third_party/vendored
(cd third_party/vendored && echo v2 > VERSION && git commit -qam "v2, never pushed")
git add third_party/vendored && git commit -qm "bump vendored to v2"
cd "$W"
log="$RAW/git-submodule-update-commit-not-on-remote.log"; : > "$log"
run_logged "$log" "git clone -q project checkout"
run_logged "$log" "cd checkout && git -c protocol.file.allow=always submodule update --init --recursive"
publish "$log" git-submodule-update-commit-not-on-remote
log="$RAW/git-clone-recursive-submodule-commit-not-on-remote.log"; : > "$log"
run_logged "$log" "git -c protocol.file.allow=always clone --recurse-submodules project checkout2"
publish "$log" git-clone-recursive-submodule-commit-not-on-remote
