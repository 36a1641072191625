#!/usr/bin/env bash
# Capture: logs that look alarming but end in success (causes = []).
#
#  * a torch CUDAExtension (tinyext-noisy) built with torch $TORCH_CUDA + nvcc 13.0 whose code
#    draws g++ and nvcc warnings, with torch's own warnings (no numpy, no GPU on the machine);
#  * pip installs that print "ERROR:" / "could not find ninja" lines yet succeed.
set -u
. "$(dirname "$0")/env_lib.sh"
ensure_torch_venvs
ensure_pkgs
P="$SCRATCH/nearpkgs"
rm -rf "$P"; mkdir -p "$P"; cp -r "$PKGS/tinyext-noisy" "$PKGS/tinycpp" "$P/"; rm -rf "$P"/*/build "$P"/*/dist

"$VENV_CU/bin/pip" uninstall -q -y noisyext 2>/dev/null
$CASE --slug noisyext-build-success-with-warnings --cwd "$P/tinyext-noisy" --expect ok --outcome success \
    --title "pip -v install --no-build-isolation of a CUDAExtension with torch 2.14.1+cu130 and nvcc 13.0: warnings, then success" \
    --cmd "CUDA_HOME=$CUDA_DIR TORCH_CUDA_ARCH_LIST='9.0' MAX_JOBS=1 $VENV_CU/bin/pip install -v --no-build-isolation ." \
    --cmd "$VENV_CU/bin/python -c 'import torch, noisyext; print(torch.__version__, noisyext.__file__)'" \
    --python "$VENV_CU/bin/python" --nvcc "$NVCC" --gcc \
    --key "Successfully installed noisyext-0.1.0" \
    --notes "Warnings only: unused parameters in torch headers (-Wextra), unused variables, signed/unsigned comparison, torch's 'No CUDA runtime is found' (no GPU on the build machine) and NumPy notices. Importing the module succeeds."
"$VENV_CU/bin/pip" uninstall -q -y noisyext 2>/dev/null
rm -rf "$P/tinyext-noisy/build"

# The same build without TORCH_CUDA_ARCH_LIST on this GPU-less machine is NOT a near miss:
# torch finds no visible GPU to take the arch list from and fails before compiling anything.
$CASE --slug noisyext-no-gpu-no-arch-list-indexerror --cwd "$P/tinyext-noisy" \
    --title "pip -v install --no-build-isolation of a CUDAExtension on a machine without a GPU and without TORCH_CUDA_ARCH_LIST" \
    --cmd "CUDA_HOME=$CUDA_DIR MAX_JOBS=1 $VENV_CU/bin/pip install -v --no-build-isolation ." \
    --python "$VENV_CU/bin/python" --nvcc "$NVCC" --gcc --cause unsupported_arch \
    --key "arch_list[-1] += '+PTX'" --key "IndexError: list index out of range" \
    --fix "Set TORCH_CUDA_ARCH_LIST to the target GPUs' compute capabilities (e.g. TORCH_CUDA_ARCH_LIST='9.0' for H100) when building on a machine without a visible GPU." \
    --notes "torch 2.14.1's _get_cuda_arch_flags builds the arch list from visible GPUs when TORCH_CUDA_ARCH_LIST is unset; with none it indexes an empty list. An empty arch list, not an unknown arch: a better id may be a new one (e.g. arch_list_missing)."
rm -rf "$P/tinyext-noisy/build"

$CASE --slug noisyext-setup-py-build-ext-success-with-warnings --cwd "$P/tinyext-noisy" --expect ok --outcome success \
    --title "python setup.py build_ext --inplace of a warning-heavy CUDAExtension (torch 2.14.1+cu130, nvcc 13.0, sm_90)" \
    --cmd "CUDA_HOME=$CUDA_DIR TORCH_CUDA_ARCH_LIST='9.0' MAX_JOBS=1 $VENV_CU/bin/python setup.py build_ext --inplace" \
    --python "$VENV_CU/bin/python" --nvcc "$NVCC" --gcc \
    --key "copying build/lib.linux-x86_64-cpython-311/noisyext.cpython-311-x86_64-linux-gnu.so" \
    --notes "The build succeeds; every diagnostic is a warning (unused parameters in torch headers under -Wextra, unused variables, signed/unsigned comparison, torch's NumPy notice)."
rm -rf "$P/tinyext-noisy/build"

"$VENV_CPU/bin/pip" uninstall -q -y tinycpp 2>/dev/null
$CASE --slug tinycpp-pip-success-without-ninja-fallback-warning --cwd "$P/tinycpp" --hide /usr/bin/ninja \
    --expect ok --outcome success \
    --title "pip -v install --no-build-isolation of a CppExtension on a machine without ninja: slow fallback, success" \
    --cmd "MAX_JOBS=1 $VENV_CPU/bin/pip install -v --no-build-isolation ." \
    --python "$VENV_CPU/bin/python" --gcc \
    --key "Successfully installed tinycpp-0.1.0" \
    --notes "torch warns that ninja is missing and falls back to the distutils backend; the build still succeeds. /usr/bin/ninja was hidden for this run."
"$VENV_CPU/bin/pip" uninstall -q -y tinycpp 2>/dev/null

$CASE --slug pip-install-success-with-resolver-error-line --cwd "$SCRATCH" --expect ok --outcome success \
    --title "pip install sympy==1.13.1 next to torch 2.13.0: pip prints an ERROR about a conflict, then installs" \
    --cmd "$VENV_CPU/bin/pip install sympy==1.13.1" \
    --python "$VENV_CPU/bin/python" \
    --key "Successfully installed sympy-1.13.1" \
    --notes "The ERROR line is pip's post-install dependency check; the install itself succeeded (the venv now has a torch whose requirement is unmet, which matters later but is not a failure here)."
"$VENV_CPU/bin/pip" install -q "sympy==1.14.0"
rm -rf "$P"
