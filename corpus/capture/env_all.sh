#!/usr/bin/env bash
# Re-capture every packaging / environment case, one script after another (they share venvs
# and test packages, so never in parallel). Takes about an hour on 2 cores; the builds run
# with MAX_JOBS=1 under `nice`. Needs root (PEP 668 checks against Debian's python3, private
# mount namespaces for the "no toolkit" / "no ninja" / "small disk" cases), the local torch
# wheels, and network access to the package index.
#
#   SCRATCH=/some/dir ./env_all.sh              # all groups
#   CAPTURE_ONLY="slug ..." ./env_cpu_torch.sh  # some cases of one group
set -u
here="$(cd "$(dirname "$0")" && pwd)"
bash "$here/env_make_pkgs.sh"
for group in externally_managed no_matching build_isolation missing_build_deps cuda_home \
             cpu_torch abi_mismatch disk_full build_interrupted near_miss sessions flash_attn_cxx; do
    echo "== $group"
    nice bash "$here/env_$group.sh"
done
# Remove the large scratch pieces (the torch venvs are ~6 GB together):
#   rm -rf "${SCRATCH:-/work/scratch/envfail}"
