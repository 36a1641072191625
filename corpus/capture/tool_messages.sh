#!/usr/bin/env bash
# Capture the tools' own messages that the tool-message rules were written from (CMake's CUDA
# language support and generators, pip's Requires-Python check, uv's installer, poetry's solver), on this
# machine:
#   CMake 3.25 told CUDA_ARCHITECTURES=native where no GPU is visible (-D and CUDAARCHS forms);
#   CMake given a CUDA compiler it cannot run (CMAKE_CUDA_COMPILER=nvcc not on PATH, CUDACXX at a
#   path that does not exist) and a CUDAToolkit_ROOT with no nvcc (environment and -D forms);
#   CMake with a generator whose build program is not installed (Ninja, Unix Makefiles);
#   a cmake_minimum_required newer than this CMake (plain and range forms);
#   pip 23.2.1 installing (and building a wheel of) a package whose Requires-Python excludes this
#   interpreter;
#   uv 0.13.9 syncing (and running) a lock whose dependency has only a wheel for another platform
#   (Windows, macOS arm64);
#   poetry 2.5.1 locking (and adding) a version the index never released.
# Usage: WORK=/path/to/scratch corpus/capture/tool_messages.sh [case ...]
set -u
. "$(dirname "$0")/lib.sh"
W="$WORK/tool_messages"; mkdir -p "$W"
CUDA="$CUDA13/bin"
VENV_UV="$W/venv-uv"                 # uv 0.13.9 and wheel, from the package index
VENV_POETRY="$W/venv-poetry"         # poetry 2.5.1, from the package index (it asks the index itself)
BARE="$W/bare-bin"                    # a PATH with the compilers, cmake and make but no nvcc or ninja
NOMAKE="$W/nomake-bin"                # ... and one without make either
mkdir -p "$BARE" "$NOMAKE" && for t in cc c++ gcc g++ cmake as ld; do ln -sf "/usr/bin/$t" "$BARE/$t"; ln -sf "/usr/bin/$t" "$NOMAKE/$t"; done
ln -sf /usr/bin/make "$BARE/make"

cuda_project() {  # cuda_project DIR [extra CMake lines]: a one-kernel CUDA project
    rm -rf "$1" && mkdir -p "$1"
    printf '__global__ void fill(float *x) { x[threadIdx.x] = 1.0f; }\n' > "$1/fill.cu"
    { printf 'cmake_minimum_required(VERSION 3.24)\nproject(fill LANGUAGES CXX CUDA)\n'; printf '%s\n' "${2:-}"
      printf 'add_library(fill STATIC fill.cu)\n'; } > "$1/CMakeLists.txt"
}

cmake_native_no_gpu() {
    cuda_project "$W/native"; cd "$W/native"
    local log="$RAW/cmake-cuda-architectures-native-no-gpu.log"; : > "$log"
    run_logged "$log" "export PATH=$CUDA:\$PATH; nvcc --version | tail -2; cmake -S . -B build -G Ninja -DCMAKE_CUDA_ARCHITECTURES=native"
    publish "$log" cmake-cuda-architectures-native-no-gpu
}

cmake_cudaarchs_env_native() {
    cuda_project "$W/native-env"; cd "$W/native-env"
    local log="$RAW/cmake-cudaarchs-env-native-makefiles-no-gpu.log"; : > "$log"
    run_seq "$log" "export PATH=$CUDA:\$PATH CUDAARCHS=native" "cmake -S . -B build"
    publish "$log" cmake-cudaarchs-env-native-makefiles-no-gpu
}

cmake_cuda_compiler_not_on_path() {
    cuda_project "$W/nopath"; cd "$W/nopath"
    local log="$RAW/cmake-cuda-compiler-nvcc-not-on-path.log"; : > "$log"
    run_logged "$log" "PATH=$BARE cmake -S . -B build -DCMAKE_CUDA_COMPILER=nvcc"
    publish "$log" cmake-cuda-compiler-nvcc-not-on-path
}

cmake_cudacxx_missing_path() {
    cuda_project "$W/cudacxx"; cd "$W/cudacxx"
    local log="$RAW/cmake-cudacxx-points-at-missing-nvcc.log"; : > "$log"
    run_seq "$log" "export CUDACXX=/usr/local/cuda-12.4/bin/nvcc" "PATH=$BARE cmake -S . -B build"
    publish "$log" cmake-cudacxx-points-at-missing-nvcc
}

cmake_toolkit_root_env() {
    cuda_project "$W/root-env"; cd "$W/root-env"
    local log="$RAW/cmake-cudatoolkit-root-env-no-nvcc.log"; : > "$log"
    run_seq "$log" "export CUDAToolkit_ROOT=/opt/cuda-12.4" "PATH=$BARE cmake -S . -B build"
    publish "$log" cmake-cudatoolkit-root-env-no-nvcc
}

cmake_toolkit_root_option() {
    cuda_project "$W/root-opt"; cd "$W/root-opt"
    local log="$RAW/cmake-cudatoolkit-root-option-no-nvcc.log"; : > "$log"
    run_seq "$log" "mkdir build && cd build" "PATH=$BARE cmake .. -G 'Unix Makefiles' -DCUDAToolkit_ROOT=/usr/local/cuda-12.1 -DCMAKE_BUILD_TYPE=Release"
    publish "$log" cmake-cudatoolkit-root-option-no-nvcc
}

cmake_no_ninja() {
    cuda_project "$W/noninja"; cd "$W/noninja"
    local log="$RAW/cmake-generator-ninja-not-installed.log"; : > "$log"
    run_logged "$log" "PATH=$BARE:$CUDA cmake -S . -B build -G Ninja"
    publish "$log" cmake-generator-ninja-not-installed
}

cmake_no_make() {
    rm -rf "$W/nomake" && mkdir -p "$W/nomake" && cd "$W/nomake"
    printf 'int main() { return 0; }\n' > main.cpp
    printf 'cmake_minimum_required(VERSION 3.20)\nproject(app LANGUAGES CXX)\nadd_executable(app main.cpp)\n' > CMakeLists.txt
    local log="$RAW/cmake-unix-makefiles-make-not-installed.log"; : > "$log"
    run_logged "$log" "PATH=$NOMAKE cmake -S . -B build -G 'Unix Makefiles'"
    publish "$log" cmake-unix-makefiles-make-not-installed
}

cmake_too_old() {
    rm -rf "$W/old" && mkdir -p "$W/old" && cd "$W/old"
    printf 'int main() { return 0; }\n' > main.cpp
    printf 'cmake_minimum_required(VERSION 3.26)\nproject(app LANGUAGES CXX CUDA)\nadd_executable(app main.cpp)\n' > CMakeLists.txt
    local log="$RAW/cmake-minimum-required-3-26-have-3-25.log"; : > "$log"
    run_seq "$log" "cmake --version" "cmake -S . -B build -G Ninja"
    publish "$log" cmake-minimum-required-3-26-have-3-25
}

cmake_too_old_range() {
    rm -rf "$W/oldrange" && mkdir -p "$W/oldrange/ext" && cd "$W/oldrange"
    printf 'int main() { return 0; }\n' > ext/main.cpp
    printf 'cmake_minimum_required(VERSION 3.18)\nproject(top LANGUAGES CXX)\nadd_subdirectory(ext)\n' > CMakeLists.txt
    printf 'cmake_minimum_required(VERSION 3.28...3.31)\nadd_executable(ext main.cpp)\n' > ext/CMakeLists.txt
    local log="$RAW/cmake-subdirectory-minimum-range-3-28.log"; : > "$log"
    run_seq "$log" "mkdir -p build && cd build" "cmake .. -DCMAKE_BUILD_TYPE=Release" "make -j2"
    publish "$log" cmake-subdirectory-minimum-range-3-28
}

pip_requires_python_dir() {
    rm -rf "$W/rp" && mkdir -p "$W/rp/fused_ops" && cd "$W/rp"
    printf 'from setuptools import setup\nsetup(name="fused-ops", version="0.3.1", packages=["fused_ops"], python_requires=">=3.12")\n' > setup.py
    : > fused_ops/__init__.py
    local log="$RAW/pip-local-package-requires-python-3-12.log"; : > "$log"
    run_seq "$log" "python3 --version" "python3 -m venv .venv && . .venv/bin/activate" "pip install ."
    publish "$log" pip-local-package-requires-python-3-12
}

pip_requires_python_wheel() {
    rm -rf "$W/rpw" && mkdir -p "$W/rpw/src/kernels_ext" && cd "$W/rpw"
    printf 'from setuptools import setup\nsetup(name="kernels-ext", version="1.2.0", packages=["kernels_ext"], python_requires=">=3.8,<3.11")\n' > src/setup.py
    : > src/kernels_ext/__init__.py
    local log="$RAW/pip-wheel-source-folder-requires-python-below-3-11.log"; : > "$log"
    run_seq "$log" "python3 -m venv venv && venv/bin/python -m pip --version" "venv/bin/python -m pip wheel -q --no-deps -w dist ./src"
    publish "$log" pip-wheel-source-folder-requires-python-below-3-11
}

uv_locked_wheel_for_another_platform() {  # SLUG PLATFORM_TAG COMMAND: a lock resolved with a find-links folder whose
    # only wheel of gpukern is for another platform (built here, then retagged with `wheel tags`)
    local slug=$1 tag=$2 cmd=$3 d="$W/$1"
    [ -x "$VENV_UV/bin/uv" ] || { python3 -m venv "$VENV_UV" && "$VENV_UV/bin/pip" install -q uv==0.13.9 wheel; }
    rm -rf "$d" && mkdir -p "$d/pkg/gpukern" "$d/links" "$d/app" && cd "$d/pkg"
    printf 'from setuptools import setup\nsetup(name="gpukern", version="0.9.2", packages=["gpukern"])\n' > setup.py; : > gpukern/__init__.py
    "$VENV_UV/bin/pip" wheel -q --no-deps -w "$d/w" . && "$VENV_UV/bin/wheel" tags --platform-tag "$tag" --python-tag cp311 --abi-tag cp311 "$d/w/gpukern-0.9.2-py3-none-any.whl" >/dev/null
    mv "$d"/w/*"$tag".whl "$d/links/" && cd "$d/app"
    printf '[project]\nname = "app"\nversion = "0.1.0"\nrequires-python = ">=3.11"\ndependencies = ["gpukern==0.9.2"]\n\n[tool.uv]\nfind-links = ["%s/links"]\n' "$d" > pyproject.toml
    local log="$RAW/$slug.log"; : > "$log"
    run_seq "$log" "export PATH=$VENV_UV/bin:\$PATH" "uv --version" "uv lock --offline" "$cmd"
    publish "$log" "$slug"
}
uv_sync_windows_only_wheel() { uv_locked_wheel_for_another_platform uv-sync-locked-dependency-windows-only-wheel win_amd64 "uv sync --offline"; }
uv_run_macos_only_wheel() { uv_locked_wheel_for_another_platform uv-run-locked-dependency-macos-arm64-only-wheel macosx_14_0_arm64 "uv run --offline python -c 'import gpukern'"; }

poetry_project() {  # poetry_project DIR DEPENDENCIES: a PEP 621 project for poetry 2
    rm -rf "$1" && mkdir -p "$1"
    printf '[project]\nname = "app"\nversion = "0.1.0"\nrequires-python = ">=3.11,<3.13"\ndependencies = [%s]\n\n[build-system]\nrequires = ["poetry-core>=2.0"]\nbuild-backend = "poetry.core.masonry.api"\n' "$2" > "$1/pyproject.toml"
    [ -x "$VENV_POETRY/bin/poetry" ] || { python3 -m venv "$VENV_POETRY" && "$VENV_POETRY/bin/pip" install -q poetry==2.5.1; }
}
poetry_lock_version_not_released() {
    poetry_project "$W/poetry-lock" '"torch (==2.99.0)"'; cd "$W/poetry-lock"
    local log="$RAW/poetry-lock-torch-version-never-released.log"; : > "$log"
    run_seq "$log" "export POETRY_VIRTUALENVS_IN_PROJECT=true PATH=$VENV_POETRY/bin:\$PATH" "poetry --version" "poetry lock"
    publish "$log" poetry-lock-torch-version-never-released
}
poetry_add_version_not_released() {
    poetry_project "$W/poetry-add" ''; cd "$W/poetry-add"
    local log="$RAW/poetry-add-ninja-version-never-released.log"; : > "$log"
    run_seq "$log" "export POETRY_VIRTUALENVS_IN_PROJECT=true PATH=$VENV_POETRY/bin:\$PATH" "poetry add 'ninja==0.0.1'"
    publish "$log" poetry-add-ninja-version-never-released
}

ALL="cmake_native_no_gpu cmake_cudaarchs_env_native cmake_cuda_compiler_not_on_path cmake_cudacxx_missing_path
cmake_toolkit_root_env cmake_toolkit_root_option cmake_no_ninja cmake_no_make cmake_too_old cmake_too_old_range
pip_requires_python_dir pip_requires_python_wheel uv_sync_windows_only_wheel uv_run_macos_only_wheel
poetry_lock_version_not_released poetry_add_version_not_released"
for c in ${@:-$ALL}; do echo "== $c"; "$c"; done
