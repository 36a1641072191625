#!/usr/bin/env bash
# Capture: a torch CppExtension compiled with the old C++ ABI (-D_GLIBCXX_USE_CXX11_ABI=0, a flag old
# setup.py files kept from the torch 1.x wheels) against torch 2.13.0+cpu, which is built with the
# C++11 ABI: TORCH_CHECK's message is a std::string, so the extension needs
# c10::detail::torchCheckFail(..., const std::string&) mangled the old way (...RKSs), which torch does
# not export, and importing it fails on an undefined symbol. The script that imports it installs
# Rich's traceback handler (as many command-line tools do), and Rich wraps the ImportError's text at
# the console's width (COLUMNS): with the source tree's short path the symbol moves to the next line;
# with the package installed in the venv's site-packages the break falls between "undefined" and
# "symbol:", and in a console just wide enough for "ImportError: <library>:" the library path ends the
# line and "undefined symbol: ..." starts the next.
#
#   WORK=/path/to/scratch corpus/capture/abi_wrapped.sh        (torch 2.13.0+cpu from /opt/wheels; rich)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
: "${WORK:?set WORK to a scratch folder}"
. "$HERE/lib.sh"
V=${VENV:-$WORK/venv-cpu}   # VENV: an existing venv with that torch and rich
P=$WORK/tinyabi
TORCH_WHEEL=${TORCH_WHEEL:-/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl}

[ -x "$V/bin/python" ] || { python3 -m venv "$V" && "$V/bin/pip" install -q "$TORCH_WHEEL" rich; }

make_pkg() {
    rm -rf "$P"; mkdir -p "$P/csrc" "$P/tinyabi"
    cat >"$P/csrc/ops.cpp" <<'CPP'
#include <torch/extension.h>

torch::Tensor scale(torch::Tensor x, double alpha) {
  TORCH_CHECK(x.dim() > 0, "scale: expected a tensor with at least one dimension, got ", x.dim());
  return x * alpha;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("scale", &scale, "x * alpha");
}
CPP
    cat >"$P/setup.py" <<'PY'
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

setup(
    name="tinyabi",
    version="0.1.0",
    packages=["tinyabi"],
    ext_modules=[
        CppExtension(
            "tinyabi._C",
            ["csrc/ops.cpp"],
            # kept from the days of the pre-built torch 1.x wheels (the old C++ ABI)
            extra_compile_args=["-D_GLIBCXX_USE_CXX11_ABI=0"],
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
PY
    echo 'from . import _C  # noqa: F401' >"$P/tinyabi/__init__.py"
    mkdir -p "$WORK/run"; cat >"$WORK/run/check.py" <<'PY'
from rich.traceback import install

install()

import torch
import tinyabi

print(torch.__version__, tinyabi._C.scale(torch.ones(2), 2.0))
PY
    cp "$WORK/run/check.py" "$P/check.py"
}

case_run() {   # $1 slug, $2 a regex the log must match, then the commands
    local slug=$1 want=$2; shift 2; local log=$RAW/$slug.log
    rm -f "$log"; make_pkg; "$V/bin/pip" uninstall -q -y tinyabi 2>/dev/null
    run_seq "$log" "$@"
    grep -Pzq "$want" "$log" || { echo "$slug: the log does not wrap as expected" >&2; return 1; }
    publish "$log" "$slug"
}

# Built in place, run from the source tree: "... .so: undefined symbol:" ends the line, the symbol is on the next.
case_run tinyabi-old-cxx-abi-inplace-import-rich-wraps-symbol \
    'undefined symbol: ?\n_ZN3c106detail14torchCheckFailEPKcS2_jRKSs\n' \
    "cd $P" "MAX_JOBS=1 $V/bin/python setup.py build_ext --inplace" "COLUMNS=120 $V/bin/python check.py"
# Installed into the venv, run from elsewhere: the venv's longer path moves the break between "undefined" and "symbol:".
case_run tinyabi-old-cxx-abi-installed-import-rich-wraps-undefined-symbol \
    'linux-gnu\.so: undefined ?\nsymbol: _ZN3c106detail14torchCheckFailEPKcS2_jRKSs\n' \
    "cd $P" "MAX_JOBS=1 $V/bin/pip install --no-build-isolation ." "cd $WORK/run" "COLUMNS=120 $V/bin/python check.py"
# Installed, in a terminal just wide enough for "ImportError: <library>:": the library path ends the line and
# "undefined symbol: ..." starts the next.
SO=$V/lib/python3.11/site-packages/tinyabi/_C.cpython-311-x86_64-linux-gnu.so
COLS=$(( ${#SO} + 1 + 13 + 4 ))
case_run tinyabi-old-cxx-abi-installed-import-rich-wraps-after-library \
    'linux-gnu\.so: ?\nundefined symbol: _ZN3c106detail14torchCheckFailEPKcS2_jRKSs\n' \
    "cd $P" "MAX_JOBS=1 $V/bin/pip install --no-build-isolation ." "cd $WORK/run" "COLUMNS=$COLS $V/bin/python check.py"
