# Sourced by the scripts that configure a C or C++ build (scripts/build.sh, scripts/static.sh,
# fuzz/run.sh): sets CCACHE_CMAKE_ARGS to the CMake arguments that put ccache in front of the
# compilers, and exports its settings; both empty when ccache is not installed (scripts/setup.sh
# installs it) or LEASEHOLD_CCACHE=0 (then they clear a launcher an earlier configure set).
#   - The cache is ccache's own default, ~/.cache/ccache (CCACHE_DIR overrides it); the image
#     build mounts the same directory (scripts/image.sh).
#   - CCACHE_BASEDIR is the checkout, so that a clone in another folder (CI's) hits what an
#     earlier clone compiled: ccache rewrites paths under it to relative ones before hashing.
#   - CCACHE_NOHASHDIR: the working directory is not hashed either (it differs per clone and
#     only reaches the debug information's DW_AT_comp_dir).
# A hit is only taken for the same compiler, flags and preprocessed source, so a warm build is
# the same build; `ccache -s` shows the hits.
CCACHE_CMAKE_ARGS=(-DCMAKE_C_COMPILER_LAUNCHER= -DCMAKE_CXX_COMPILER_LAUNCHER=)
if [[ "${LEASEHOLD_CCACHE:-1}" != 0 ]] && command -v ccache >/dev/null; then
  # The physical path (pwd -P): the one the compiler is given, even in a clone reached through
  # a symbolic link.
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)}
  export CCACHE_NOHASHDIR=1
  CCACHE_CMAKE_ARGS=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
