#!/usr/bin/env bash
# Capture: pip / uv refusing to install into Debian's PEP 668 ("externally managed") python3.
#
# Needs: Debian's /usr/bin/python3 with /usr/lib/python3.11/EXTERNALLY-MANAGED, python3-pip
# (/usr/bin/pip3), sudo, and uv in $VENV_UV. Runs as root. Nothing gets installed: every
# command is refused before it touches the system.
set -u
. "$(dirname "$0")/env_lib.sh"
ensure_uv
command -v sudo >/dev/null || apt-get install -y sudo
[ -x /usr/bin/pip3 ] || apt-get install -y python3-pip

SYSPATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"   # a root shell without pyenv
FIX_PIP="Create a virtual environment (python3 -m venv DIR) and call its interpreter explicitly: DIR/bin/python -m pip install ...; leave the Debian interpreter to apt and avoid --break-system-packages."
FIX_UV="Create a venv (uv venv DIR) and point uv at it with --python DIR/bin/python (or activate it) instead of --system or the Debian interpreter."
PY_ARGS=(--python "$SYS_PY")

$CASE --slug debian-python3-m-pip-flash-attn --cwd "$SCRATCH" \
    --title "python3 -m pip install flash-attn with Debian's system python3" \
    --cmd "$SYS_PY -m pip install flash-attn" \
    "${PY_ARGS[@]}" --cause externally_managed_pip \
    --key "error: externally-managed-environment" --key "This environment is externally managed" \
    --fix "$FIX_PIP"

$CASE --slug debian-pip3-verbose-root-shell --cwd "$SCRATCH" \
    --title "pip3 -v install ninja packaging from a root shell whose PATH finds Debian's pip3" \
    --cmd "PATH=$SYSPATH pip3 -v install ninja packaging" \
    "${PY_ARGS[@]}" --cause externally_managed_pip \
    --key "error: externally-managed-environment" --key "This environment is externally managed" \
    --fix "$FIX_PIP" \
    --notes "pip3 here is /usr/bin/pip3 (Debian's pip 23.0.1); -v adds nothing before the refusal."

$CASE --slug sudo-pip3-install-no-build-isolation --cwd "$SCRATCH" \
    --title "sudo pip3 install --no-build-isolation flash-attn (sudo's secure_path picks Debian's pip3)" \
    --cmd "sudo pip3 install --no-build-isolation flash-attn==$FLASH_ATTN" \
    "${PY_ARGS[@]}" --cause externally_managed_pip \
    --key "error: externally-managed-environment" \
    --fix "$FIX_PIP Do not use sudo for pip."

$CASE --slug debian-pip-user-install-torch --cwd "$SCRATCH" \
    --title "python3 -m pip install --user torch with Debian's python3 (--user is refused too)" \
    --cmd "$SYS_PY -m pip install --user torch==$TORCH_CUDA" \
    "${PY_ARGS[@]}" --cause externally_managed_pip \
    --key "error: externally-managed-environment" \
    --fix "$FIX_PIP"

$CASE --slug debian-pip3-upgrade-pip --cwd "$SCRATCH" \
    --title "pip3 install --upgrade pip setuptools wheel with Debian's pip3" \
    --cmd "/usr/bin/pip3 install --upgrade pip setuptools wheel" \
    "${PY_ARGS[@]}" --cause externally_managed_pip \
    --key "This environment is externally managed" \
    --fix "$FIX_PIP"

$CASE --slug uv-pip-install-system-debian --cwd "$SCRATCH" \
    --title "uv pip install --system ninja where the first python3 on PATH is Debian's" \
    --cmd "PATH=$SYSPATH $UV pip install --system ninja" \
    "${PY_ARGS[@]}" --uv "$UV" --cause externally_managed_pip \
    --key "is externally managed, and indicates the following" \
    --fix "$FIX_UV"

$CASE --slug uv-pip-install-python-usr-bin-python3 --cwd "$SCRATCH" \
    --title "uv pip install --python /usr/bin/python3 --no-build-isolation flash-attn" \
    --cmd "$UV pip install --python $SYS_PY --no-build-isolation flash-attn==$FLASH_ATTN" \
    "${PY_ARGS[@]}" --uv "$UV" --cause externally_managed_pip \
    --key "is externally managed, and indicates the following" \
    --fix "$FIX_UV"
