#!/usr/bin/env bash
# Capture: a CUDA math/DNN library the dynamic loader cannot find. Two shapes:
#  * Python's ctypes loading cuDNN 9 by its soname (no cuDNN is installed on this machine);
#  * a small C program linked (beforehand, in this script) against the toolkit's libcupti (CUDA 13.0),
#    then run, and ldd'd, with the toolkit's library folders made absent for the run (--hide), as on a
#    machine or image that has the program but not that CUDA library.
#
#   WORK=/path/to/scratch
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
CASE="python3 $HERE/env_capture.py"
: "${WORK:?set WORK to a scratch folder}"
LIB=/usr/local/cuda-13.0/lib64
INC=/usr/local/cuda-13.0/include
D="$WORK/cupti-probe"
rm -rf "$D"; mkdir -p "$D"
cat > "$D/probe.c" <<'C'
#include <stdio.h>
#include <cupti.h>
int main(void) { uint32_t v = 0; cuptiGetVersion(&v); printf("CUPTI API %u\n", v); return 0; }
C
gcc "$D/probe.c" -I"$INC" -L"$LIB" -lcupti -o "$D/probe"

$CASE --slug ctypes-load-libcudnn-so-9-not-installed --cwd "$WORK" \
    --title "python ctypes.CDLL('libcudnn.so.9') where no cuDNN is installed" \
    --cmd "python3 -c \"import ctypes; ctypes.CDLL('libcudnn.so.9')\"" \
    --python python3 --cause cuda_toolkit_incomplete \
    --key "OSError: libcudnn.so.9: cannot open shared object file: No such file or directory" \
    --fix "install cuDNN 9 (pip install nvidia-cudnn-cu12, or the cuDNN package) and add the folder that holds libcudnn.so.9 to LD_LIBRARY_PATH"

$CASE --slug c-program-linked-libcupti-run-without-ld-library-path --cwd "$D" --unset LD_LIBRARY_PATH \
    --title "a C program linked against CUDA 13.0's libcupti, run with the toolkit's lib folder absent" \
    --hide /usr/local/cuda-13.0/lib \
    --cmd "ldd ./probe | grep cupti" --cmd "./probe" \
    --mode seq --gcc --nvcc /usr/local/cuda-13.0/bin/nvcc --cause cuda_toolkit_incomplete \
    --key "./probe: error while loading shared libraries: libcupti.so.13: cannot open shared object file: No such file or directory" \
    --fix "install the CUDA 13 toolkit library libcupti.so.13 (the toolkit, or pip install nvidia-cuda-cupti-cu13) and add its folder to LD_LIBRARY_PATH, then run again" \
    --notes "probe was built with: gcc probe.c -I/usr/local/cuda-13.0/include -L/usr/local/cuda-13.0/lib64 -lcupti -o probe"
