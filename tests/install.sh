#!/bin/sh
# make install into a staging root, then build the examples (installed
# with it) against the installed library through pkg-config, shared and
# static, and run them.
b=${1:?build directory}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
command -v pkg-config >/dev/null 2>&1 || skip_all "pkg-config is not installed"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
cc=${CC:-cc}

check "make install" make -s -C "$top" O="$b" DESTDIR="$t/root" \
	PREFIX=/usr install
for f in usr/include/noclobber.h usr/include/noclobber_core.h \
	 usr/lib/libnoclobber.so.0 \
	 usr/lib/libnoclobber.a usr/lib/pkgconfig/noclobber.pc \
	 usr/bin/noclobber usr/share/man/man3/ncb_mmap.3 \
	 usr/bin/noclobber-conform usr/share/man/man1/noclobber-conform.1 \
	 usr/share/man/man1/noclobber.1 usr/share/man/man7/noclobber.7; do
	[ -e "$t/root/$f" ]
	ok $? "installed $f"
done
# The watchers' program, where this build has them, installed and run.
if [ -x "$b/noclobber-watch" ]; then
	w=$t/root/usr/libexec/noclobber/noclobber-watch
	[ -x "$w" ]
	ok $? "installed usr/libexec/noclobber/noclobber-watch"
	"$w" watch -- /bin/true 2>"$t/watch.err"
	ok $? "the installed watcher runs"
	grep -q "0 clobbers" "$t/watch.err"
	ok $? "and reports"
	! ldd "$t/root/usr/bin/noclobber" | grep -Eq 'libseccomp|libbpf'
	ok $? "the tool itself loads neither libseccomp nor libbpf"
fi
export PKG_CONFIG_SYSROOT_DIR="$t/root"
export PKG_CONFIG_LIBDIR="$t/root/usr/lib/pkgconfig"
check "pkg-config knows noclobber" pkg-config --exists noclobber
# shellcheck disable=SC2046
check "example builds against the installed shared library" \
	"$cc" -Wall -Werror -o "$t/map-at" "$top/examples/map-at.c" \
	$(pkg-config --cflags --libs noclobber)
LD_LIBRARY_PATH="$t/root/usr/lib" "$t/map-at" 0x200000000 | grep -q mapped
ok $? "example runs against the installed shared library"
LD_LIBRARY_PATH="$t/root/usr/lib" ldd "$t/map-at" | grep -q "$t/root/usr/lib/libnoclobber.so.0"
ok $? "and really used it"
# Every example, installed, built from there against the installed
# library, and run.
for src in "$top"/examples/*.c; do
	ex=$(basename "$src" .c)
	src=$t/root/usr/share/doc/noclobber/examples/$ex.c
	cmp -s "$top/examples/$ex.c" "$src"
	ok $? "examples/$ex.c installed"
	# vendor-core carries the core itself: the header and nothing else.
	libs=$(pkg-config --libs noclobber)
	[ "$ex" = vendor-core ] && libs=
	# shellcheck disable=SC2046,SC2086
	check "examples/$ex builds" "$cc" -Wall -Wextra -Werror \
		-o "$t/$ex" "$src" $(pkg-config --cflags noclobber) $libs
	case $ex in
	map-at) args=0x200000000 ;;
	load-span) args=/usr/bin/true ;;
	run-elf) args="/usr/bin/echo run through the loader" ;;
	*) args= ;;
	esac
	# shellcheck disable=SC2086
	LD_LIBRARY_PATH="$t/root/usr/lib" "$t/$ex" $args > "$t/$ex.out" 2>&1
	ok $? "examples/$ex runs"
done
grep -qx "run through the loader" "$t/run-elf.out"
ok $? "examples/run-elf ran echo"
grep -q "^arena at " "$t/vendor-core.out"
ok $? "examples/vendor-core placed its arena"
# shellcheck disable=SC2046
check "example links statically" \
	"$cc" -static -o "$t/map-at-static" "$top/examples/map-at.c" \
	$(pkg-config --static --cflags --libs noclobber)
"$t/map-at-static" 0x1000 | grep -Eq 'mapped|Operation not permitted'
ok $? "static example runs"
done_testing
