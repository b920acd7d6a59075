#!/bin/sh
# The Python binding (python/): its pytest suite, against this build's
# libnoclobber.so.0 and tool, one TAP line per test.  The interpreter is
# the first that has pytest: Debian's (/usr/bin/python3, python3-pytest),
# then python3 from PATH; NCB_PYTHON names others to try instead.
b=${1:?build directory}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
case $b in
/*) ;;
*) b=$(pwd)/$b ;;
esac
lib=$b/libnoclobber.so.0
[ -e "$lib" ] || skip_all "no $lib: run make"
py=
for p in ${NCB_PYTHON:-/usr/bin/python3 python3}; do
	if "$p" -m pytest --version >/dev/null 2>&1; then
		py=$p
		break
	fi
done
[ -n "$py" ] || skip_all "pytest is not installed for \
${NCB_PYTHON:-/usr/bin/python3 or python3} (Debian: python3-pytest)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "# $("$py" --version 2>&1) ($py), $("$py" -m pytest --version 2>&1)"

cd "$top/python" || exit 1
NOCLOBBER_LIB=$lib NOCLOBBER_TOOL=$b/noclobber PYTHONPATH=$top/python \
PYTHONDONTWRITEBYTECODE=1 "$py" -m pytest -p no:cacheprovider -q -rfEsx \
	--junitxml="$tmp/junit.xml" tests >"$tmp/out" 2>&1
status=$?
# pytest's report, as comments.
sed 's/^/# /' "$tmp/out"
[ -s "$tmp/junit.xml" ] || {
	echo "not ok 1 - pytest ran (status $status)"
	echo "1..1"
	exit 1
}
"$py" - "$tmp/junit.xml" <<'EOF'
import sys
import xml.etree.ElementTree as ET

n = 0
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    n += 1
    name = "%s::%s" % (case.get("classname"), case.get("name"))
    skipped = case.find("skipped")
    failed = case.find("failure")
    if failed is None:
        failed = case.find("error")
    if skipped is not None and skipped.get("type") == "pytest.xfail":
        print("not ok %d - %s # TODO %s" % (n, name, skipped.get("message")))
    elif skipped is not None:
        reason = (skipped.get("message") or "").replace("\n", " ")
        print("ok %d # SKIP %s: %s" % (n, name, reason))
    elif failed is not None:
        print("not ok %d - %s" % (n, name))
    else:
        print("ok %d - %s" % (n, name))
print("1..%d" % n)
EOF
[ $status -eq 0 ]
