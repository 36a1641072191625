#!/usr/bin/env bash
# Capture: pip refusing a local wheel whose only platform tags are manylinux_2_NN with NN above this
# system's glibc ("... is not a supported wheel on this platform."). The capture machine has glibc
# 2.36 (Debian 12); the wheels are tagged manylinux_2_99 (and _2_98), which no glibc here satisfies,
# while their python tag (cp311) is the venv's own, so the platform tag alone is refused.
# Then two wheels whose platform fits but whose python tag (cp38 under Python 3.11) or machine
# (linux_aarch64 on x86_64) does not: pip prints the same line.
# Nothing is downloaded: the wheels are written here (a one-module pure-Python wheel, renamed by tag).
set -u
export SCRATCH="${SCRATCH:-/work/scratch/f10glibc}"
. "$(dirname "$0")/env_lib.sh"
V="$SCRATCH/venv-glibc"
ensure_venv "$V"
B="$V/bin"
W="$SCRATCH/wheels"
mkdir -p "$W"

# wheel NAME VERSION TAG: writes $W/NAME-VERSION-TAG.whl (valid layout, one module)
wheel() {
    "$B/python" - "$W" "$1" "$2" "$3" <<'PY'
import base64, hashlib, sys, zipfile
out, name, version, tag = sys.argv[1:]
di = f"{name}-{version}.dist-info"
files = {
    f"{name}.py": "VALUE = 1\n",
    f"{di}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
    f"{di}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: false\n"
    + "".join(f"Tag: {'-'.join(tag.split('-', 2)[:2])}-{p}\n" for p in tag.split("-", 2)[2].split(".")),
}
record = []
for path, text in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
    record.append(f"{path},sha256={digest},{len(text.encode())}")
record.append(f"{di}/RECORD,,")
files[f"{di}/RECORD"] = "\n".join(record) + "\n"
with zipfile.ZipFile(f"{out}/{name}-{version}-{tag}.whl", "w") as z:
    for path, text in files.items():
        z.writestr(path, text)
PY
}

wheel glibckern 0.3.0 cp311-cp311-manylinux_2_99_x86_64
wheel tagdemo 1.2.0 cp311-cp311-manylinux_2_98_x86_64.manylinux_2_99_x86_64

$CASE --slug pip-install-local-wheel-manylinux-2-99-glibc-2-36 --cwd "$W" \
    --title "pip install of a local cp311 wheel tagged manylinux_2_99 on Debian 12 (glibc 2.36)" \
    --cmd "$B/pip install ./glibckern-0.3.0-cp311-cp311-manylinux_2_99_x86_64.whl" \
    --python "$B/python" --cause glibc_too_old \
    --key "glibckern-0.3.0-cp311-cp311-manylinux_2_99_x86_64.whl is not a supported wheel on this platform" \
    --fix "The wheel needs glibc >= 2.99 and this system has 2.36 (ldd --version): install a release built for an older manylinux tag (manylinux2014 / manylinux_2_28), or run on a newer distribution." \
    --notes "The wheel's python tag cp311 is the venv's (Python 3.11.7); only its platform tag is refused."

$CASE --slug pip-only-binary-local-wheel-two-manylinux-tags-glibc-2-36 --cwd "$W" \
    --title "pip install --only-binary :all: of a local cp311 wheel tagged manylinux_2_98.manylinux_2_99, glibc 2.36" \
    --cmd "ldd --version | head -1" \
    --cmd "$B/pip install --only-binary :all: --no-index $W/tagdemo-1.2.0-cp311-cp311-manylinux_2_98_x86_64.manylinux_2_99_x86_64.whl" \
    --mode seq --python "$B/python" --cause glibc_too_old \
    --key "manylinux_2_98_x86_64.manylinux_2_99_x86_64.whl is not a supported wheel on this platform" \
    --fix "The wheel needs glibc >= 2.98 and ldd shows 2.36: install a release built for an older manylinux tag, or run on a newer distribution." \
    --notes "Two platform tags in one wheel name; both ask for a newer glibc than the system's."

wheel fastops 0.9.1 cp38-cp38-manylinux2014_x86_64
wheel edgekern 1.4.0 cp311-cp311-linux_aarch64

$CASE --slug pip-install-local-cp38-manylinux2014-wheel-under-python-3-11 --cwd "$W" \
    --title "pip install of a local cp38 manylinux2014 wheel into a Python 3.11 venv (glibc 2.36)" \
    --cmd "$B/python --version" \
    --cmd "$B/pip install ./fastops-0.9.1-cp38-cp38-manylinux2014_x86_64.whl" \
    --mode seq --python "$B/python" --cause no_matching_distribution \
    --key "fastops-0.9.1-cp38-cp38-manylinux2014_x86_64.whl is not a supported wheel on this platform" \
    --fix "The wheel is for CPython 3.8 (cp38) and the venv runs 3.11: install with Python 3.8, or take the release's cp311 wheel." \
    --notes "manylinux2014 needs glibc 2.17 and the system has 2.36: only the python tag is refused."

$CASE --slug pip-install-local-aarch64-wheel-on-x86-64 --cwd "$W" \
    --title "python -m pip install --no-index of a local cp311 linux_aarch64 wheel on an x86_64 machine" \
    --cmd "$B/python -m pip install --no-index $W/edgekern-1.4.0-cp311-cp311-linux_aarch64.whl" \
    --python "$B/python" --cause no_matching_distribution \
    --key "edgekern-1.4.0-cp311-cp311-linux_aarch64.whl is not a supported wheel on this platform" \
    --fix "The wheel is built for ARM (aarch64, a Jetson or an ARM server) and this machine is x86_64: take the release's x86_64 wheel, or build from source." \
    --notes "The python tag cp311 is the venv's; only the machine in the platform tag is refused."
