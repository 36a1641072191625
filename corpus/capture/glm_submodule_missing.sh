#!/usr/bin/env bash
# Capture: a C++ extension that vendors glm as a git submodule (third_party/glm, as the gaussian
# splatting rasterizers do) built from a source folder where that submodule is empty (an archive
# download, or a clone without --recursive): g++ stops at "fatal error: glm/glm.hpp: No such file
# or directory". The fixture is fixtures/glm_vendored_ext; it is copied into a project's
# submodules/ folder with an empty third_party/glm. Needs g++, python3 and setuptools only.
#   pip install ./submodules/glm-rasterizer         from the project folder
#   python setup.py build_ext --inplace              inside the extension's folder
set -u
export SCRATCH="${SCRATCH:-/work/scratch/f10glm}"
. "$(dirname "$0")/env_lib.sh"
V="$SCRATCH/venv-glm"
ensure_venv "$V" setuptools wheel
B="$V/bin"
P="$SCRATCH/gs-project"
rm -rf "$P"; mkdir -p "$P/submodules"
cp -r "$CAPTURE_DIR/fixtures/glm_vendored_ext" "$P/submodules/glm-rasterizer"
mkdir -p "$P/submodules/glm-rasterizer/third_party/glm"    # the submodule's folder, empty

$CASE --slug pip-install-submodule-rasterizer-glm-submodule-empty --cwd "$P" \
    --title "pip install ./submodules/glm-rasterizer whose third_party/glm submodule folder is empty (gcc 12)" \
    --cmd "$B/pip install --no-build-isolation ./submodules/glm-rasterizer" \
    --python "$B/python" --setuptools --gcc --cause missing_submodule \
    --key "fatal error: glm/glm.hpp: No such file or directory" \
    --fix "Clone the project with git clone --recursive (or run git submodule update --init --recursive) so that third_party/glm is filled, then reinstall."

rm -rf "$P/submodules/glm-rasterizer/build"
$CASE --slug setup-py-build-ext-rasterizer-glm-submodule-empty --cwd "$P/submodules/glm-rasterizer" \
    --title "python setup.py build_ext --inplace in a rasterizer whose third_party/glm submodule is empty (gcc 12)" \
    --cmd "$B/python setup.py build_ext --inplace" \
    --python "$B/python" --setuptools --gcc --cause missing_submodule \
    --key "fatal error: glm/glm.hpp: No such file or directory" \
    --fix "git submodule update --init --recursive in the source checkout (third_party/glm is empty), then rebuild."
