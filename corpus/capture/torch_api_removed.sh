#!/usr/bin/env bash
# Capture: old torch C++ extensions that use APIs newer torch releases removed, built against a
# current torch (CPU build; a CppExtension compiles with g++ alone, no GPU or CUDA toolkit needed):
#   the TH / THC headers (removed in torch 1.11): #include <THC/THC.h>, <TH/TH.h>, <THC/THCDeviceUtils.cuh>;
#   AT_CHECK (removed in torch 1.5; TORCH_CHECK replaces it), in a function and in a template;
#   THC functions and types: THCudaCheck, THCState / getTHCState, THCCeilDiv, THCudaMalloc.
# Built with plain, verbose and editable pip (PEP 517, --no-build-isolation), `setup.py bdist_wheel`,
# `setup.py build_ext --inplace` with and without ninja, and torch.utils.cpp_extension.load (JIT).
#
#   WORK=/some/dir corpus/capture/torch_api_removed.sh
#   WORK=/some/dir corpus/capture/torch_api_removed.sh SLUG ...      # some cases only
#
# Needs: python3.11, gcc, and the package index for torch 2.13.0 (its +cpu build), setuptools, wheel, ninja.
set -u
: "${WORK:=/work/scratch/torch_api}"
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="$WORK/venv-torch-cpu"
P="$WORK/pkgs"
mkdir -p "$WORK"
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q "torch==2.13.0+cpu" setuptools wheel ninja numpy   # setuptools 84: `setup.py develop` runs pip itself
fi

# pkg NAME SOURCE-FILE [ninja|distutils] -- a one-source CppExtension package, its source on stdin
pkg() {
    local name=$1 src=$2 backend=${3:-ninja} d="$P/$1"
    rm -rf "$d"; mkdir -p "$d/csrc"
    cat > "$d/csrc/$src"
    local use_ninja=True
    [ "$backend" = distutils ] && use_ninja=False
    cat > "$d/setup.py" <<EOF
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

setup(
    name="$name",
    version="0.1.0",
    ext_modules=[CppExtension("${name}._C", ["csrc/$src"])],
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=$use_ninja)},
)
EOF
}

pkg roi_align_ops roi_align.cpp <<'EOF'
#include <torch/extension.h>
#include <THC/THC.h>

at::Tensor roi_align_forward(const at::Tensor &input, const at::Tensor &rois) {
  return input.index_select(0, rois.to(at::kLong));
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &roi_align_forward, "RoIAlign forward"); }
EOF

pkg dcn_v2 dcn_v2_cpu.cpp <<'EOF'
#include <vector>
#include <TH/TH.h>
#include <torch/extension.h>

at::Tensor dcn_v2_cpu_forward(const at::Tensor &input, const at::Tensor &weight) {
  return at::matmul(input, weight);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("dcn_v2_forward", &dcn_v2_cpu_forward, "dcn v2 forward"); }
EOF

pkg deform_conv deform_conv.cpp <<'EOF'
#include <torch/extension.h>

int deform_conv_forward(at::Tensor input, at::Tensor weight, at::Tensor offset, int batchSize) {
  AT_CHECK(input.is_contiguous(), "input tensor has to be contiguous");
  AT_CHECK((offset.size(0) == batchSize), "invalid batch size of offset");
  return 1;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("deform_conv_forward", &deform_conv_forward, "deform conv forward"); }
EOF

pkg iou3d_ops iou3d.cpp <<'EOF'
#include <torch/extension.h>

template <typename scalar_t>
int check_boxes(const at::Tensor &boxes) {
  AT_CHECK(boxes.size(1) == 7, "boxes must have 7 columns");
  return boxes.size(0);
}

int boxes_count(const at::Tensor &boxes) { return check_boxes<float>(boxes); }

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("boxes_count", &boxes_count, "count boxes"); }
EOF

pkg nms_ext nms.cpp <<'EOF'
#include <torch/extension.h>

at::Tensor nms(const at::Tensor &boxes, double threshold) {
  THCState *state = at::globalContext().getTHCState();
  void *mask = THCudaMalloc(state, boxes.size(0) * sizeof(unsigned long long));
  int err = 0;
  THCudaCheck(err);
  THCudaFree(state, mask);
  return boxes;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("nms", &nms, "non-maximum suppression"); }
EOF

pkg sigmoid_focal_loss focal_loss.cpp distutils <<'EOF'
#include <torch/extension.h>

at::Tensor focal_loss_forward(const at::Tensor &logits, int64_t num_classes) {
  const int64_t blocks = THCCeilDiv(logits.numel(), (int64_t)512);
  THArgCheck(logits.dim() == 2, 1, "logits must be 2-D");
  return logits.sigmoid().mul(blocks);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &focal_loss_forward, "focal loss forward"); }
EOF

pkg correlation_ops correlation.cpp <<'EOF'
#include <torch/extension.h>
#include <THC/THCDeviceUtils.cuh>
#include <THC/THCAtomics.cuh>

at::Tensor correlation_forward(const at::Tensor &a, const at::Tensor &b) { return a.mul(b).sum(1); }

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &correlation_forward, "correlation forward"); }
EOF
# a pyproject.toml, so that pip's editable install is PEP 660's (without one, pip runs `setup.py develop`,
# which setuptools 80 and later hand back to pip in an isolated environment without torch)
printf '%s\n' '[build-system]' 'requires = ["setuptools", "torch"]' 'build-backend = "setuptools.build_meta"' > "$P/correlation_ops/pyproject.toml"

mkdir -p "$P/jit_ops"
cat > "$P/jit_ops/ops.cpp" <<'EOF'
#include <torch/extension.h>
#include <THC/THC.h>

extern THCState *state;

at::Tensor scale(const at::Tensor &x) { return x * 2; }

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("scale", &scale, "scale"); }
EOF
cat > "$P/jit_ops/build.py" <<'EOF'
from torch.utils.cpp_extension import load

ops = load(name="jit_ops", sources=["ops.cpp"], verbose=True)
print(ops.scale)
EOF

export CAPTURE_HERE="$HERE" CAPTURE_VENV="$VENV" CAPTURE_PKGS="$P"
exec "$VENV/bin/python" - "$@" <<'EOF'
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, os.environ["CAPTURE_HERE"])
from _capture import Session, selected, write_case  # noqa: E402

VENV = Path(os.environ["CAPTURE_VENV"])
PKGS = Path(os.environ["CAPTURE_PKGS"])
ONLY = selected(sys.argv[1:])
TORCH_VERSION = 'python -c "import torch; print(torch.__version__)"'
HEADER_FIX = "build against a torch that still ships the TH/THC headers (before 1.11), or port the source off them"


def session(pkg: str) -> Session:
    s = Session(VENV, PKGS / pkg)
    s.env["MAX_JOBS"] = "2"
    for leftover in ("build", f"{pkg}.egg-info"):
        shutil.rmtree(PKGS / pkg / leftover, ignore_errors=True)
    s.cd(PKGS / pkg)
    return s


def case(slug, pkg, commands, *, title, key_lines, fix, notes="", torch_first=False):
    if ONLY is not None and slug not in ONLY:
        return
    print(slug, file=sys.stderr)
    s = session(pkg)
    if torch_first:
        s.run(TORCH_VERSION)
    for cmd in commands:
        s.run(cmd)
    write_case(slug, s, title=title, command=commands[-1], tools=s.versions(), outcome="failure",
               causes=["torch_api_removed"], key_lines=key_lines, fix=fix,
               notes=notes or "captured by corpus/capture/torch_api_removed.sh")


case("pip-no-build-isolation-ext-thc-h-removed-torch-2-13", "roi_align_ops",
     ["pip install --no-build-isolation ."],
     title="pip install --no-build-isolation of an old RoIAlign CppExtension including THC/THC.h, torch 2.13.0+cpu",
     key_lines=["fatal error: THC/THC.h: No such file or directory"], fix=HEADER_FIX, torch_first=True)
case("pip-verbose-dcnv2-cpu-th-h-removed-torch-2-13", "dcn_v2",
     ["pip install -v --no-build-isolation ."],
     title="pip install -v of a DCNv2-style CPU extension including TH/TH.h, torch 2.13.0+cpu (ninja)",
     key_lines=["fatal error: TH/TH.h: No such file or directory"], fix=HEADER_FIX)
case("setup-py-build-ext-deform-conv-at-check-removed-torch-2-13", "deform_conv",
     ["python setup.py build_ext --inplace"],
     title="python setup.py build_ext --inplace (ninja) of a deform_conv extension still using AT_CHECK, torch 2.13.0+cpu",
     key_lines=["error: ‘AT_CHECK’ was not declared in this scope"],
     fix="replace AT_CHECK with TORCH_CHECK (AT_CHECK was removed in torch 1.5)", torch_first=True)
case("pip-verbose-iou3d-template-at-check-removed-torch-2-13", "iou3d_ops",
     ["pip install -v --no-build-isolation ."],
     title="pip install -v of an iou3d op calling AT_CHECK inside a template, torch 2.13.0+cpu",
     key_lines=["error: there are no arguments to \u2018AT_CHECK\u2019 that depend on a template parameter"],
     fix="replace AT_CHECK with TORCH_CHECK (AT_CHECK was removed in torch 1.5)")
case("setup-py-bdist-wheel-nms-thc-state-thcudamalloc-removed", "nms_ext",
     ["python setup.py bdist_wheel"],
     title="setup.py bdist_wheel (ninja) of an NMS op using THCState, getTHCState, THCudaMalloc, THCudaCheck, torch 2.13.0+cpu",
     key_lines=["error: ‘THCState’ was not declared in this scope"],
     fix="port to c10::cuda::CUDACachingAllocator::raw_alloc / raw_delete and C10_CUDA_CHECK, or build against torch < 1.11")
case("setup-py-build-ext-distutils-focal-loss-thcceildiv-removed", "sigmoid_focal_loss",
     ["python setup.py build_ext --inplace"],
     title="setup.py build_ext --inplace without ninja (distutils) of a focal-loss op using THCCeilDiv and THArgCheck, torch 2.13.0+cpu",
     key_lines=["error: ‘THCCeilDiv’ was not declared in this scope"],
     fix="use at::ceil_div from ATen/ceil_div.h and TORCH_CHECK, or build against torch < 1.11", torch_first=True)
case("pip-editable-correlation-thcdeviceutils-cuh-removed", "correlation_ops",
     ["pip install --no-build-isolation -e ."],
     title="pip install -e of a correlation op including THC/THCDeviceUtils.cuh, torch 2.13.0+cpu",
     key_lines=["fatal error: THC/THCDeviceUtils.cuh: No such file or directory"], fix=HEADER_FIX)
case("jit-load-extension-thc-h-removed-torch-2-13", "jit_ops",
     ["python build.py"],
     title="torch.utils.cpp_extension.load (JIT, verbose) of a source including THC/THC.h, torch 2.13.0+cpu",
     key_lines=["fatal error: THC/THC.h: No such file or directory"], fix=HEADER_FIX, torch_first=True)
EOF
