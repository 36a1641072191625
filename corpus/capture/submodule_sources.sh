#!/usr/bin/env bash
# Capture CMake configuring a clone made without --recurse-submodules, where a library target lists
# sources inside a git submodule's (empty) folder: "Cannot find source file:" then "No SOURCES given to
# target:". Local repositories over git's file transport; only git and cmake are needed.
#   cmake_third_party_sources   add_library(fastlz third_party/fastlz/src/fastlz.c) from the top CMakeLists.txt
#   cmake_nested_src_library    src/CMakeLists.txt: add_library(pathfind ${CMAKE_CURRENT_SOURCE_DIR}/pathfind/src/pathfind.c)
#   cmake_externals_wrapper     externals/inih/CMakeLists.txt (the project's own) lists inih/ini.c (the submodule's)
#   cmake_plugins_header        add_executable lists plugins/pagedgeo/include/batch.h, a header of a submodule
# Usage: WORK=/path/to/scratch corpus/capture/submodule_sources.sh [case ...]
set -u
. "$(dirname "$0")/lib.sh"
W="$WORK/submodule_sources"
TODAY=$(date +%F)
GIT_V=$(git --version | awk '{print $3}')
CMAKE_V=$(cmake --version | head -1 | awk '{print $3}')
export GIT_AUTHOR_NAME=dev GIT_AUTHOR_EMAIL=dev@example.invalid GIT_COMMITTER_NAME=dev GIT_COMMITTER_EMAIL=dev@example.invalid

# library NAME FILE: a repository holding one C file at FILE
library() {
    git init -q -b main "$W/$1" && mkdir -p "$(dirname "$W/$1/$2")"
    printf 'int %s_version(void) { return 1; }\n' "$1" > "$W/$1/$2"
    (cd "$W/$1" && git add . && git commit -qm "$1 1.0")
}

# project NAME SUBMODULE_PATH LIBRARY: a superproject whose files are already in $W/NAME, with LIBRARY as a submodule
project() {
    (cd "$W/$1" && git init -q -b main && git -c protocol.file.allow=always submodule add -q "../$3" "$2" \
        && git add . && git commit -qm "$1 with $3 as a submodule")
}

# sidecar SLUG TITLE COMMAND KEY...: writes corpus/cases/SLUG.toml
sidecar() {
    local slug=$1 title=$2 cmd=$3; shift 3
    local keys; keys=$(printf '"%s", ' "$@"); keys=${keys%, }
    cat > "$CASES/$slug.toml" <<TOML
title = "$title"
provenance = "captured"
date = "$TODAY"
command = "$cmd"
tools = { git = "$GIT_V", cmake = "$CMAKE_V" }
source = "corpus/capture/submodule_sources.sh"
outcome = "failure"
causes = ["missing_submodule"]
key_lines = [$keys]
risks = []
fix = "git submodule update --init --recursive in the clone, then configure again"
notes = "Local repositories over git's file transport; the clone was made without --recurse-submodules."
TOML
}

cmake_third_party_sources() {
    library fastlz src/fastlz.c
    mkdir -p "$W/lz4tool" && printf 'int main(void) { return 0; }\n' > "$W/lz4tool/main.c"
    printf 'cmake_minimum_required(VERSION 3.16)\nproject(lz4tool C)\nadd_library(fastlz STATIC third_party/fastlz/src/fastlz.c)\nadd_executable(lz4tool main.c)\ntarget_link_libraries(lz4tool fastlz)\n' > "$W/lz4tool/CMakeLists.txt"
    project lz4tool third_party/fastlz fastlz
    local log="$RAW/cmake-third-party-submodule-sources-missing.log"; : > "$log"
    cd "$W" && run_logged "$log" "git clone -q lz4tool lz4tool-clone"
    run_logged "$log" "cd lz4tool-clone && cmake -S . -B build"
    grep -q 'Cannot find source file:' "$log" || { echo "cmake_third_party_sources: no 'Cannot find source file:'" >&2; return 1; }
    publish "$log" cmake-third-party-submodule-sources-missing
    sidecar cmake-third-party-submodule-sources-missing \
        "cmake configure of a clone made without submodules: add_library lists third_party/fastlz/src/fastlz.c, whose submodule folder is empty" \
        "git clone -q lz4tool lz4tool-clone && cd lz4tool-clone && cmake -S . -B build" \
        "Cannot find source file:" "third_party/fastlz/src/fastlz.c"
}

cmake_nested_src_library() {
    library pathfind src/pathfind.c
    mkdir -p "$W/gridtool/src" && printf 'int main(void) { return 0; }\n' > "$W/gridtool/src/main.c"
    printf 'cmake_minimum_required(VERSION 3.16)\nproject(gridtool C)\nadd_subdirectory(src)\n' > "$W/gridtool/CMakeLists.txt"
    printf 'add_library(pathfind STATIC ${CMAKE_CURRENT_SOURCE_DIR}/pathfind/src/pathfind.c)\nadd_executable(gridtool main.c)\ntarget_link_libraries(gridtool pathfind)\n' > "$W/gridtool/src/CMakeLists.txt"
    project gridtool src/pathfind pathfind
    local log="$RAW/cmake-nested-src-submodule-library-missing.log"; : > "$log"
    cd "$W" && run_logged "$log" "git clone -q gridtool gridtool-clone"
    run_logged "$log" "cd gridtool-clone && mkdir build && cd build && cmake .."
    grep -q 'No SOURCES given to target: pathfind' "$log" || { echo "cmake_nested_src_library: no 'No SOURCES given'" >&2; return 1; }
    publish "$log" cmake-nested-src-submodule-library-missing
    sidecar cmake-nested-src-submodule-library-missing \
        "cmake configure of a clone made without submodules: src/pathfind (a library kept as a submodule, with its own src/) is empty" \
        "git clone -q gridtool gridtool-clone && cd gridtool-clone && mkdir build && cd build && cmake .." \
        "Cannot find source file:" "pathfind/src/pathfind.c"
}

cmake_externals_wrapper() {
    library inih ini.c
    mkdir -p "$W/emu/externals/inih" && printf 'int main(void) { return 0; }\n' > "$W/emu/main.c"
    printf 'cmake_minimum_required(VERSION 3.16)\nproject(emu C)\nadd_subdirectory(externals/inih)\nadd_executable(emu main.c)\ntarget_link_libraries(emu inih)\n' > "$W/emu/CMakeLists.txt"
    printf 'add_library(inih STATIC inih/ini.c)\n' > "$W/emu/externals/inih/CMakeLists.txt"
    project emu externals/inih/inih inih
    local log="$RAW/cmake-externals-wrapper-submodule-source-missing.log"; : > "$log"
    cd "$W" && run_logged "$log" "git clone -q emu emu-clone"
    run_logged "$log" "cd emu-clone && cmake -S . -B build -DCMAKE_BUILD_TYPE=Release"
    grep -q 'CMake Error at externals/inih/CMakeLists.txt' "$log" || { echo "cmake_externals_wrapper: no error in externals/" >&2; return 1; }
    publish "$log" cmake-externals-wrapper-submodule-source-missing
    sidecar cmake-externals-wrapper-submodule-source-missing \
        "cmake configure of a clone made without submodules: the project's externals/inih/CMakeLists.txt lists inih/ini.c from the empty submodule" \
        "git clone -q emu emu-clone && cd emu-clone && cmake -S . -B build -DCMAKE_BUILD_TYPE=Release" \
        "CMake Error at externals/inih/CMakeLists.txt" "Cannot find source file:"
}

cmake_plugins_header() {
    library pagedgeo include/batch.h
    mkdir -p "$W/forest" && printf 'int main(void) { return 0; }\n' > "$W/forest/main.c"
    printf 'cmake_minimum_required(VERSION 3.16)\nproject(forest C)\nadd_executable(forest main.c plugins/pagedgeo/include/batch.h)\n' > "$W/forest/CMakeLists.txt"
    project forest plugins/pagedgeo pagedgeo
    local log="$RAW/cmake-plugins-submodule-header-missing.log"; : > "$log"
    cd "$W" && run_logged "$log" "git clone -q forest forest-clone"
    run_logged "$log" "cd forest-clone && cmake -S . -B build"
    grep -q 'Cannot find source file:' "$log" || { echo "cmake_plugins_header: no 'Cannot find source file:'" >&2; return 1; }
    publish "$log" cmake-plugins-submodule-header-missing
    sidecar cmake-plugins-submodule-header-missing \
        "cmake configure of a clone made without submodules: add_executable lists plugins/pagedgeo/include/batch.h from an empty submodule folder" \
        "git clone -q forest forest-clone && cd forest-clone && cmake -S . -B build" \
        "Cannot find source file:" "plugins/pagedgeo/include/batch.h"
}

ALL="cmake_third_party_sources cmake_nested_src_library cmake_externals_wrapper cmake_plugins_header"
for c in ${*:-$ALL}; do
    rm -rf "$W"; mkdir -p "$W"
    "$c" || exit 1
done
