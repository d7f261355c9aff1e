# lib.sh — shared by scripts/demo and scripts/test: make sure the Debian
# packages the build needs are installed (musl-tools: the start-up front
# `mlprof` is linked statically against musl). Sourced, not run.

MLPROF_PACKAGES=(cmake make gcc pkg-config libzstd-dev libunwind-dev libcmocka-dev
                 libpapi-dev libdw-dev zstd zlib1g-dev musl-tools)
# Only the test suite needs these: MPI (libmlprof_mpi and its tests) and the
# Python binding's tests (numpy, PyTorch), the HTML report's browser check,
# libc's separate debug information (libc/libm frames named by the stacks
# test), CPython's internal headers (Python frames in CPU samples), a C++
# compiler (the C++ program of the stacks test), clang with
# libclang-rt-14-dev (libclang_rt.fuzzer) for the fuzz run, protoc (the
# Perfetto export decoded against its schema) and Go (`go tool pprof`
# reading the pprof exports and their labels).
MLPROF_TEST_PACKAGES=(libopenmpi-dev openmpi-bin python3 python3-numpy python3-torch chromium libc6-dbg
                      python3.11-dev g++ clang libclang-rt-14-dev protobuf-compiler golang-go)

# Print the packages of the list that are not installed.
mlprof_missing_packages() {
  local p
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
      echo "$p"
    fi
  done
}

# Install what is missing when root; otherwise say how and fail.
mlprof_ensure_packages() {
  if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "note: not a Debian-like system; make sure these are installed: ${MLPROF_PACKAGES[*]}" >&2
    return 0
  fi
  local missing
  missing=$(mlprof_missing_packages "$@" | tr '\n' ' ')
  missing=${missing% }
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" -eq 0 ]; then
    echo "installing: $missing"
    export DEBIAN_FRONTEND=noninteractive
    # shellcheck disable=SC2086
    apt-get update && apt-get install -y --no-install-recommends $missing
  else
    echo "missing packages; as root, run:" >&2
    echo "  apt-get install -y $missing" >&2
    return 1
  fi
}

mlprof_jobs() {
  echo "${MLPROF_JOBS:-2}"
}
