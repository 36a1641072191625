#!/usr/bin/env bash
# Capture: genuine logs for the signal rules (symptom / success roles) that no or one corpus log
# proved: setuptools' "error: command '...' failed", setup.py's "Finished processing dependencies
# for ...", and pip 25's "ERROR: Failed to build '...' when getting requirements to build wheel".
#
#   SCRATCH=/some/dir corpus/capture/signal_rules.sh
#   CAPTURE_ONLY="slug ..." corpus/capture/signal_rules.sh      # some cases only
#
# Needs: the pyenv python3 (its venvs bundle setuptools 65.5, whose setup.py commands print these
# lines), gcc, and the package index for pip 25.3 (and for the isolated build's setuptools).
set -u
export SCRATCH="${SCRATCH:-/work/scratch/signals}"
. "$(dirname "$0")/env_lib.sh"
P="$SCRATCH/pkgs-signals"
VENV_PIP25="$SCRATCH/venv-pip25"
fresh_venv "$VENV_BARE"
[ -x "$VENV_PIP25/bin/pip" ] || ensure_venv "$VENV_PIP25" pip==25.3
B="$VENV_BARE/bin"

write_pkgs() {
    rm -rf "$P"; mkdir -p "$P/fastcrc" "$P/rowsum" "$P/tinyhelpers/tinyhelpers" "$P/logfmt/logfmt" "$P/needs_torch"
    # a C extension that includes a header of a library that is not installed
    printf '%s\n' 'from setuptools import Extension, setup' '' \
        'setup(name="fastcrc", version="0.3.1", ext_modules=[Extension("fastcrc", ["fastcrc.c"])])' > "$P/fastcrc/setup.py"
    cat > "$P/fastcrc/fastcrc.c" <<'EOF'
#include <Python.h>
#include <libdeflate.h>

static PyObject *crc(PyObject *self, PyObject *args) { return PyLong_FromLong(libdeflate_crc32(0, "", 0)); }
static PyMethodDef methods[] = {{"crc", crc, METH_NOARGS, ""}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "fastcrc", NULL, -1, methods};
PyMODINIT_FUNC PyInit_fastcrc(void) { return PyModule_Create(&mod); }
EOF
    # a C++ extension with a syntax error
    printf '%s\n' 'from setuptools import Extension, setup' '' \
        'setup(name="rowsum", version="1.0.0", ext_modules=[Extension("rowsum", ["rowsum.cpp"], extra_compile_args=["-std=c++17"])])' > "$P/rowsum/setup.py"
    cat > "$P/rowsum/rowsum.cpp" <<'EOF'
#include <Python.h>
#include <vector>

static PyObject *total(PyObject *self, PyObject *args) {
    std::vector<long> v{1, 2, 3};
    long s = 0;
    for (auto x : v) s += x
    return PyLong_FromLong(s);
}
static PyMethodDef methods[] = {{"total", total, METH_NOARGS, ""}, {nullptr, nullptr, 0, nullptr}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "rowsum", nullptr, -1, methods};
PyMODINIT_FUNC PyInit_rowsum(void) { return PyModule_Create(&mod); }
EOF
    # two pure-Python packages, installed with setup.py install and setup.py develop
    printf '%s\n' 'from setuptools import setup' '' \
        'setup(name="tinyhelpers", version="0.1.0", packages=["tinyhelpers"])' > "$P/tinyhelpers/setup.py"
    printf '%s\n' 'def clamp(x, lo, hi):' '    return max(lo, min(hi, x))' > "$P/tinyhelpers/tinyhelpers/__init__.py"
    printf '%s\n' 'from setuptools import setup' '' \
        'setup(name="logfmt-lite", version="2.4.0", packages=["logfmt"])' > "$P/logfmt/setup.py"
    printf '%s\n' 'def fmt(**kw):' '    return " ".join(f"{k}={v}" for k, v in kw.items())' > "$P/logfmt/logfmt/__init__.py"
    # a CUDA extension whose setup.py imports torch (absent from pip's isolated build environment)
    cat > "$P/needs_torch/setup.py" <<'EOF'
import torch
from torch.utils.cpp_extension import BuildExtension, CUDAExtension
from setuptools import setup

setup(name="fused-rmsnorm", version="0.2.0",
      ext_modules=[CUDAExtension("fused_rmsnorm", ["rmsnorm.cu"])], cmdclass={"build_ext": BuildExtension})
EOF
    touch "$P/needs_torch/rmsnorm.cu"
}
write_pkgs

$CASE --slug setup-py-build-ext-missing-library-header --cwd "$P/fastcrc" \
    --title "python setup.py build_ext of a C extension whose library header (libdeflate.h) is not installed" \
    --cmd "$B/python setup.py build_ext --inplace" \
    --python "$B/python" --setuptools --gcc --outcome failure --cause unknown \
    --key "fatal error: libdeflate.h: No such file or directory" \
    --key "error: command '/usr/bin/gcc' failed with exit code 1" \
    --fix "Install the library's development package (libdeflate-dev on Debian), then build again." \
    --notes "No cause id covers a missing system library header; the symptom is setuptools' 'error: command ... failed' line."

$CASE --slug setup-py-build-ext-cxx-syntax-error --cwd "$P/rowsum" \
    --title "python setup.py build_ext of a C++ extension with a syntax error (setuptools 65.5)" \
    --cmd "$B/python setup.py build_ext --inplace" \
    --python "$B/python" --setuptools --gcc --outcome failure --cause unknown \
    --key "rowsum.cpp:7:28: error: expected" \
    --key "error: command '/usr/bin/gcc' failed with exit code 1" \
    --notes "An error in the project's own code: no cause id applies. setuptools 65.5 compiles C++ with the C compiler's path too, so the failed command is still gcc."

$CASE --slug setup-py-install-pure-python-egg --cwd "$P/tinyhelpers" \
    --title "python setup.py install of a pure-Python package (setuptools 65.5, egg install)" \
    --cmd "$B/python setup.py install" \
    --python "$B/python" --setuptools --expect ok --outcome success \
    --key "Finished processing dependencies for tinyhelpers==0.1.0"

$CASE --slug setup-py-develop-pure-python --cwd "$P/logfmt" \
    --title "python setup.py develop of a pure-Python package (setuptools 65.5)" \
    --cmd "$B/python setup.py develop" \
    --python "$B/python" --setuptools --expect ok --outcome success \
    --key "Finished processing dependencies for logfmt-lite==2.4.0"

$CASE --slug pip-25-local-cuda-ext-isolated-build-without-torch --cwd "$P/needs_torch" \
    --title "pip 25.3 install of a local CUDA extension whose setup.py imports torch, in pip's isolated build" \
    --cmd "$VENV_PIP25/bin/pip install ." \
    --python "$VENV_PIP25/bin/python" --setuptools --outcome failure --cause build_isolation_missing_torch \
    --key "ModuleNotFoundError: No module named 'torch'" \
    --fix "Install torch into the environment first, then pip install --no-build-isolation ."
