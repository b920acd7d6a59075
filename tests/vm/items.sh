# What the VM rows run, sourced by row.sh (on the host) and guest.sh (in
# the guest).  Under TCG user code runs about 8 times slower than on the
# host, so two sets:
#   check  what make check runs (some 10 minutes for both on 2 cores):
#          every test program at a smaller scale (the model's
#          differential run short, the stress rounds few, the map count's
#          limit lowered), the BPF watcher's suite (watch-system), the
#          preload watcher's judgments and --emulate (preload), and on
#          6.1, the oldest, whose layout rules differ most from the host's,
#          the loader's (exec)
#   all    make check-vm: the programs at the native row's scale, and
#          every shell suite that applies: cli, the ptrace watcher's
#          (watch; the host runs it as before 6.11 too), the Python tests,
#          the programs the preload watcher runs (preload-exec)

b=build/native

# set_env SET SERIES
set_env() {
	vm_set=$1 vm_series=$2
	export NCB_EXPECT_NOREPLACE=honoured NCB_TEST_SLOW=1 NCB_TEST_VM=1
	export NCB_TEST_VM_SET="$1"
	case $1 in
	check)
		export NCB_MODEL_SEEDS=1 NCB_MODEL_OPS=4000
		item_timeout=1200 ;;
	all)
		export NCB_MODEL_SEEDS=8 NCB_MODEL_OPS=125000
		item_timeout=7200 ;;
	*)
		echo "items.sh: no set $1 (check or all)" >&2
		return 1 ;;
	esac
}

# The items of the set: programs by name (the conformance suite's
# among them: conformant, a release's own choices reported as such),
# shell suites as NAME.sh.
items() {
	(cd "$top/$b/tests" && ls t-*) | grep -v '\.' || :
	echo noclobber-conform watch-system.sh preload.sh
	[ "$vm_set" = all ] || [ "$vm_series" = 6.1 ] && echo exec.sh
	[ "$vm_set" = all ] &&
		echo cli.sh watch.sh python.sh preload-exec.sh
	:
}

item_command() {
	case $1 in
	*.sh) echo "sh tests/$1 $b" ;;
	noclobber-conform) echo "$b/noclobber-conform --tap" ;;
	*) echo "$b/tests/$1" ;;
	esac
}
