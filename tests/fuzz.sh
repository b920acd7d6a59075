#!/bin/sh
# Bounded libFuzzer runs (ASan, UBSan): the maps parser, the model, the
# ELF checker and planner.
b=${1:?build directory}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
command -v clang >/dev/null 2>&1 || skip_all "clang is not installed"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n)\n{ (void)d; (void)n; return 0; }\n' > "$t/f.c"
clang -fsanitize=fuzzer "$t/f.c" -o "$t/f" >/dev/null 2>&1 ||
	skip_all "clang's libFuzzer runtime (libclang-rt-14-dev) is missing"
check "fuzz target builds" make -s -C "$top" O="$b" fuzz-build
for f in maps_text model_ops elf_parse; do
	mkdir -p "$t/$f"
	"$b/fuzz/$f" -max_total_time="${NCB_FUZZ_SECONDS:-15}" \
		-print_final_stats=1 "$t/$f" $( [ -d "$top/fuzz/corpus/$f" ] &&
		echo "$top/fuzz/corpus/$f") > "$t/log" 2>&1
	rc=$?
	grep -E '^stat::number_of_executed_units' "$t/log" | sed 's/^/# /'
	[ $rc -ne 0 ] && tail -20 "$t/log" | sed 's/^/# /'
	ok $rc "$f: no crash, leak or undefined behaviour"
done
done_testing
