# Sourced by the preload watcher's suites (preload.sh, preload-exec.sh)
# with their argument, the build directory: sets b, top, nc, lib, tmp
# and cc, or skips all.
b=${1:?build directory}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
b=$(cd "$b" && pwd)
nc=$b/noclobber
lib=$b/libnoclobber-preload.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
have() { command -v "$1" >/dev/null 2>&1; }

[ -f "$lib" ] || skip_all "no $lib: run make"
"$nc" watch --help 2>&1 | grep -q -- --preload ||
	skip_all "this noclobber has no watcher (WATCH=0)"
have python3 || skip_all "python3 is not installed (it reads the JSON)"
. "$top/tests/watch-events.sh"
cc=${CC:-cc}
