#!/usr/bin/env bash
# Capture: an extension built against one torch, imported with another.
#
#  1. tinycpp (a CppExtension that calls Tensor::cholesky) built as a wheel against torch
#     $TORCH_CPU, installed into the $TORCH_CUDA venv: at::_ops::cholesky is gone there.
#  2. the same, but in one venv: build, then upgrade torch in place, then import.
#  3. tinycpp built --inplace in the source tree with one venv, imported there with the other.
# (A CUDAExtension built against torch 2.14.1+cu130 imports fine under 2.13.0+cpu here, so it
# is not a case.)
# Case 2 installs a second copy of torch $TORCH_CUDA (~5.5 GB) into $SCRATCH/venv-abi and
# removes it afterwards. Builds use MAX_JOBS=1 and take a few minutes each on 2 cores.
set -u
. "$(dirname "$0")/env_lib.sh"
ensure_torch_venvs
ensure_pkgs
FIX="Rebuild the extension against the torch that is installed now (pip install --no-build-isolation --force-reinstall --no-cache-dir ...), or install the build made for this torch/CUDA/C++ ABI."
WHEEL=tinycpp-0.1.0-cp311-cp311-linux_x86_64.whl

rm -rf "$PKGS/tinycpp/dist" "$PKGS/tinycpp/build"
"$VENV_CU/bin/pip" uninstall -q -y tinycpp 2>/dev/null
$CASE --slug tinycpp-built-with-torch-2-13-imported-with-2-14 --cwd "$PKGS/tinycpp" \
    --title "CppExtension wheel built against torch 2.13.0+cpu, installed and imported with torch 2.14.1+cu130" \
    --cmd "MAX_JOBS=1 $VENV_CPU/bin/pip wheel --no-build-isolation --no-deps -w dist ." \
    --cmd "$VENV_CU/bin/pip install dist/$WHEEL" \
    --cmd "$VENV_CU/bin/python -c 'import torch; print(torch.__version__); import tinycpp'" \
    --python "$VENV_CU/bin/python" --gcc --cause abi_mismatch \
    --key "ImportError: " --key "undefined symbol: _ZN2at4_ops8cholesky4callERKNS_6TensorEb" \
    --fix "$FIX" \
    --notes "The wheel was built in a venv with torch 2.13.0+cpu; the importing venv has torch 2.14.1+cu130, whose libtorch no longer exports at::_ops::cholesky::call."
"$VENV_CU/bin/pip" uninstall -q -y tinycpp 2>/dev/null

ABI="$SCRATCH/venv-abi"
rm -rf "$ABI" "$PKGS/tinycpp/dist" "$PKGS/tinycpp/build"
$CASE --slug tinycpp-import-after-upgrading-torch-in-place --cwd "$PKGS/tinycpp" \
    --title "CppExtension built in a venv with torch 2.13.0, then torch upgraded to 2.14.1 in that venv" \
    --cmd "$PYENV_PY -m venv $ABI" \
    --cmd ". $ABI/bin/activate" \
    --cmd "pip install -q torch==$TORCH_CPU" \
    --cmd "MAX_JOBS=1 pip install --no-build-isolation ." \
    --cmd "python -c 'import torch, tinycpp; print(torch.__version__, tinycpp.add_scaled(torch.ones(2), torch.ones(2), 2.0))'" \
    --cmd "pip install torch==$TORCH_CUDA" \
    --cmd "python -c 'import torch, tinycpp; print(torch.__version__, tinycpp.add_scaled(torch.ones(2), torch.ones(2), 2.0))'" \
    --python "$ABI/bin/python" --gcc --cause abi_mismatch \
    --key "undefined symbol: _ZN2at4_ops8cholesky4callERKNS_6TensorEb" \
    --fix "$FIX"
rm -rf "$ABI" "$PKGS/tinycpp/build"

rm -rf "$PKGS/tinycpp/build" "$PKGS/tinycpp/"*.so
$CASE --slug tinycpp-inplace-build-imported-from-other-venv --cwd "$PKGS/tinycpp" \
    --title "CppExtension built --inplace with torch 2.13.0+cpu, then imported from the source tree with torch 2.14.1+cu130" \
    --cmd "MAX_JOBS=1 $VENV_CPU/bin/python setup.py build_ext --inplace" \
    --cmd "$VENV_CU/bin/python -c 'import torch, tinycpp'" \
    --python "$VENV_CU/bin/python" --gcc --cause abi_mismatch \
    --key "undefined symbol: _ZN2at4_ops8cholesky4callERKNS_6TensorEb" \
    --fix "$FIX"
rm -rf "$PKGS/tinycpp/build" "$PKGS/tinycpp/"*.so
