#!/bin/sh
# Debian 12's kernels for the VM rows, unpacked (never installed as the
# host's kernel) with an initramfs of their own.
#
#   tests/vm/kernels.sh fetch [SERIES...]   the newest package of each
#   tests/vm/kernels.sh list                 SERIES and release, fetched
#
# SERIES is 6.1 (the release's kernel) or 6.12 (its security suite's);
# both by default.  The packages come from the machine's apt sources;
# they go to $NCB_VM_DIR (build/vm), one directory a series:
# root/ (the package's files), release, initrd.gz.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=${NCB_VM_DIR:-$top/build/vm}
series="6.1 6.12"

# The package name's pattern of a series: Debian's ABI name for 6.1, the
# upstream release for 6.12 (a backport).
pattern() {
	case $1 in
	6.1) echo '^linux-image-6\.1\.0-[0-9]+-amd64$' ;;
	6.12) echo '^linux-image-6\.12\.[0-9]+\+deb12-amd64$' ;;
	*) echo "kernels.sh: no series $1 (6.1 or 6.12)" >&2; return 1 ;;
	esac
}

newest() {
	apt-cache search --names-only "$(pattern "$1")" |
		awk '{ print $1 }' | sort -V | tail -n 1
}

fetch() {
	pkg=$(newest "$1")
	if [ -z "$pkg" ]; then
		echo "kernels.sh: no package of Linux $1 in the apt sources" \
			"(bookworm-security?)" >&2
		return 1
	fi
	rel=${pkg#linux-image-}
	d=$dir/$1
	if [ -f "$d/release" ] && [ "$(cat "$d/release")" = "$rel" ] &&
	   [ -f "$d/initrd.gz" ]; then
		echo "# Linux $1: $rel (already here)"
		return 0
	fi
	rm -rf "$d"
	mkdir -p "$d/deb"
	# apt-get download writes to the current directory.
	(cd "$d/deb" && apt-get download -qq "$pkg" 2>/dev/null) ||
		(cd "$d/deb" && apt-get download -q "$pkg")
	dpkg-deb -x "$d"/deb/*.deb "$d/root"
	rm -rf "$d/deb"
	"$top/tests/vm/initrd.sh" "$d/root" "$rel" "$d/initrd.gz"
	echo "$rel" >"$d/release"
	echo "# Linux $1: $rel"
}

cmd=${1:-fetch}
[ $# -gt 0 ] && shift
case $cmd in
fetch)
	for s in ${*:-$series}; do
		pattern "$s" >/dev/null
		fetch "$s"
	done ;;
list)
	for s in $series; do
		[ -f "$dir/$s/release" ] && echo "$s $(cat "$dir/$s/release")"
	done
	: ;;
*)
	echo "usage: kernels.sh fetch [6.1|6.12]... | list" >&2
	exit 2 ;;
esac
