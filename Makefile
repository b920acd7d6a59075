# noclobber: GNU Makefile.
#   make                 library (shared + static) and the noclobber tool
#   make demo            build, then show MAP_FIXED clobbering and ncb_mmap not
#   make check           the whole kernel-behaviour matrix, run by prove
#   make bench           benchmarks (table on stdout, CSV in $(O)/bench)
#   make soak            a long run under injected faults (SOAK_OPS=20000)
#   make docs            the pictures of README.md and docs/
#   make install         PREFIX=/usr/local DESTDIR=
#   make O=DIR CC=...    build elsewhere, e.g. with a cross compiler

VERSION := 1.2.0
SOMAJOR := 0
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DOCDIR ?= $(PREFIX)/share/doc/noclobber

O ?= build/native
CC ?= cc
AR ?= ar
CFLAGS ?= -O2 -g
# WERROR=1 makes every warning an error (CI builds so); CPPFLAGS (a
# distribution's fortification) come after the project's own.
WERROR ?= 0
NCB_WERROR := $(if $(filter 1,$(WERROR)),-Werror)
# The tool and its watchers see the library through include/ alone; the
# library, its tests and benchmarks see its private headers (src/) too.
PUB_CFLAGS := -std=gnu11 -Wall -Wextra $(NCB_WERROR) -Wshadow \
	-Wstrict-prototypes -Wmissing-prototypes -D_GNU_SOURCE -Iinclude \
	-pthread
NCB_CFLAGS := $(PUB_CFLAGS) -Isrc $(CPPFLAGS)
TOOL_CFLAGS := $(PUB_CFLAGS) -Itools $(CPPFLAGS)
# Position-independent and hidden: whatever links it exports none of it.
HIDDEN_PIC := -fPIC -fvisibility=hidden
LIB_CFLAGS := $(NCB_CFLAGS) $(HIDDEN_PIC)
LDLIBS_NCB := -pthread

# The core's libc face, the address space's readers, reservations and
# the model, flat in src/; the loader in its own room (src/loader/).
LIB_SRC := src/core.c src/opts.c src/probe.c src/mmap.c src/mremap.c \
	src/maps.c src/space.c src/near.c src/reach.c \
	src/resv.c src/model.c src/model-tree.c \
	$(wildcard src/loader/*.c)
LIB_OBJ := $(LIB_SRC:src/%.c=$(O)/src/%.o)
LIB_H := include/noclobber.h include/noclobber_core.h \
	include/noclobber_intree.h src/internal.h src/model.h \
	$(wildcard src/loader/*.h src/loader/arch/*.h)
SONAME := libnoclobber.so.$(SOMAJOR)
SHLIB := $(O)/libnoclobber.so.$(VERSION)
STLIB := $(O)/libnoclobber.a
TOOL := $(O)/noclobber
# The conformance suite (tools/conform/) is in the tool, and alone in
# noclobber-conform: static where the C library allows (not with a
# sanitizer, whose runtime is shared), no library of the project's.
CONFORM := $(O)/noclobber-conform
CONFORM_SRC := $(filter-out tools/conform/main.c, \
	$(wildcard tools/conform/*.c))
CONFORM_H := tools/conform/conform.h tools/conform/oracle.h \
	include/noclobber_core.h
CONFORM_STATIC := $(if $(findstring -fsanitize=,$(CFLAGS) $(LDFLAGS)),, \
	-static)
TOOL_SRC := $(wildcard tools/*.c) $(CONFORM_SRC)

# The watchers' rules, linked by whatever judges a call (the tool, the
# tests) and by nothing else: a static library of position-independent,
# hidden code, so that a shared object linking it exports none of it.
WATCH_LIB := $(O)/libncbwatch.a
WATCH_LIB_SRC := tools/watch/rules.c
WATCH_LIB_OBJ := $(WATCH_LIB_SRC:%.c=$(O)/%.o)
WATCH_H := $(wildcard tools/watch/*.h)

TEST_SRC := $(wildcard tests/t-*.c)
# The mmap tests again, against a vendored copy of the core alone.
CORE_TESTS := t-errno t-mremap t-stress
TEST_BIN := $(TEST_SRC:tests/%.c=$(O)/tests/%) \
	$(CORE_TESTS:%=$(O)/tests/%-core)
TEST_HELPERS := $(O)/tests/ncb-emu
BENCH_SRC := $(wildcard bench/b-*.c)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(O)/bench/%)

all: $(SHLIB) $(STLIB) $(WATCH_LIB) $(TOOL) $(CONFORM)

$(O)/src/%.o: src/%.c $(LIB_H)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LIB_CFLAGS) -c -o $@ $<

# -z defs: every symbol the library uses is resolved at link time.  Not
# with a sanitizer: its runtime comes with the program, not the library.
ZDEFS := $(if $(findstring -fsanitize=,$(CFLAGS) $(LDFLAGS)),,-Wl,-z,defs)

$(SHLIB): $(LIB_OBJ) src/libnoclobber.map
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) \
		-Wl,--version-script=src/libnoclobber.map $(ZDEFS) \
		-o $@ $(LIB_OBJ) $(LDLIBS_NCB)
	ln -sf libnoclobber.so.$(VERSION) $(O)/$(SONAME)
	ln -sf $(SONAME) $(O)/libnoclobber.so

$(STLIB): $(LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

# noclobber watch needs libseccomp, and elfutils' libdw header (the library
# is loaded when a stack is first walked), for this compiler, and the
# ptrace engine's registers for its machine (tools/watch/arch-*.c): a
# cross build has none of them, and its tool says so when asked to watch.
# The registers' file is compiled with CFLAGS too: -m32 is another machine.
WATCH_ARCH := $(firstword $(subst -, ,$(shell $(CC) -dumpmachine)))
WATCH_REGS := tools/watch/arch-$(WATCH_ARCH).c
ifndef WATCH
WATCH := $(shell [ -f $(WATCH_REGS) ] && \
	$(CC) $(CFLAGS) -c -o /dev/null $(WATCH_REGS) 2>/dev/null && \
	printf '\043include <elfutils/libdwfl.h>\nint main(void)\
	{ return 0; }' | $(CC) $(CFLAGS) $(LDFLAGS) -x c -o /dev/null - \
	-lseccomp 2>/dev/null && echo 1)
endif
ifeq ($(WATCH)$(wildcard $(WATCH_REGS))$(filter clean,$(MAKECMDGOALS)),1)
$(error WATCH=1: the watcher has no registers for $(WATCH_ARCH) \
	($(WATCH_REGS)))
endif
# The watchers live in a program of their own, noclobber-watch (the
# tool with every command), that `noclobber watch` runs in its place:
# the libraries they load would cost every other command's start.
HELPER := $(O)/noclobber-watch
HELPER_PATH := $(LIBEXECDIR)/noclobber/noclobber-watch
LITE_SRC := $(filter-out tools/cmd-watch.c,$(TOOL_SRC))
ifeq ($(WATCH),1)
TOOL_SRC += $(WATCH_REGS) $(filter-out \
	tools/watch/arch-% tools/watch/system% tools/watch/preload% \
	$(WATCH_LIB_SRC), $(wildcard tools/watch/*.c))
TOOL_LIBS := -lseccomp
TOOL_DEFS := -DNCB_PRELOAD_LIB='"$(LIBDIR)/libnoclobber-preload.so"'
LITE_DEFS := -DNCB_WATCH_HELPER='"$(HELPER_PATH)"'
all: $(HELPER)
else
TOOL_SRC := $(LITE_SRC)
TOOL_DEFS := -DNCB_NO_WATCH
LITE_DEFS := -DNCB_NO_WATCH
endif

# An i386 build's tool is also the loader an x86_64 tool hands i386
# programs to (tools/cmd-exec.c), installed in the library's directory,
# which multiarch keeps apart for each architecture.
COMPAT_LOADER := $(filter i386 i486 i586 i686,$(WATCH_ARCH))

# noclobber watch --system: BPF programs compiled by clang (CO-RE: the
# kernel's types are relocated at load, tools/watch/kernel.h), their
# skeleton made by bpftool, loaded with libbpf; for an x86_64 tool.  A
# build without them has a tool that says so when asked.
BPF_CLANG ?= clang
BPFTOOL ?= $(shell command -v bpftool || echo /usr/sbin/bpftool)
SYSTEM ?= $(shell [ "$(WATCH)" = 1 ] && \
	$(CC) -dumpmachine | grep -q '^x86_64-' && \
	command -v $(BPF_CLANG) >/dev/null && [ -x $(BPFTOOL) ] && \
	pkg-config --exists libbpf && echo 1)
ifeq ($(SYSTEM),1)
SKEL := $(O)/tools/watch-system.skel.h
TOOL_SRC += tools/watch/system.c
TOOL_LIBS += $(shell pkg-config --libs libbpf)
TOOL_DEFS += -DNCB_HAVE_SYSTEM -I$(O)/tools
endif

$(O)/tools/watch-system.bpf.o: tools/watch/system.bpf.c \
		tools/watch/system.h tools/watch/kernel.h tools/watch/calls.h \
		tools/watch/judge.h
	@mkdir -p $(@D)
	$(BPF_CLANG) -O2 -g -Wall $(NCB_WERROR) -target bpf -mcpu=v3 \
		-I/usr/include/$(shell $(BPF_CLANG) -print-multiarch) \
		-Itools/watch -c -o $@ $<

$(SKEL): $(O)/tools/watch-system.bpf.o
	$(BPFTOOL) gen skeleton $< name watch_system > $@.tmp
	mv $@.tmp $@

$(O)/tools/watch/%.o: tools/watch/%.c $(WATCH_H) include/noclobber.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(TOOL_CFLAGS) $(HIDDEN_PIC) -c -o $@ $<

# The preload watcher (tools/watch/preload*.c): a shared object of its
# own, for LD_PRELOAD, the core and the rules linked in hidden, exporting
# the calls it takes and nothing else (preload.map).  Built for every
# architecture: its emulation of MAP_FIXED_NOREPLACE is for qemu-user's
# guests and valgrind's as much as for old kernels.
PRELOAD := $(O)/libnoclobber-preload.so
PRELOAD_SRC := $(wildcard tools/watch/preload*.c)
all: $(PRELOAD)

$(PRELOAD): $(PRELOAD_SRC) $(WATCH_H) tools/watch/preload.map \
		tools/watch/calls.h tools/watch/rules.h tools/utf8.h \
		include/noclobber_core.h $(WATCH_LIB)
	$(CC) $(CFLAGS) $(TOOL_CFLAGS) $(HIDDEN_PIC) $(LDFLAGS) -shared \
		-Wl,--version-script=tools/watch/preload.map $(ZDEFS) \
		-o $@ $(PRELOAD_SRC) $(WATCH_LIB) $(LDLIBS_NCB)

$(WATCH_LIB): $(WATCH_LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

# The tools link the static libraries: they run from the build tree as
# they are.
$(HELPER): $(TOOL_SRC) tools/cli.h tools/picture.h tools/report.h \
		$(WATCH_H) include/noclobber_intree.h \
		$(STLIB) $(WATCH_LIB) $(SKEL) $(CONFORM_H)
	$(CC) $(CFLAGS) $(TOOL_CFLAGS) $(TOOL_DEFS) $(LDFLAGS) -o $@ \
		$(TOOL_SRC) $(WATCH_LIB) $(STLIB) $(TOOL_LIBS) $(LDLIBS_NCB)

$(TOOL): $(LITE_SRC) tools/cli.h tools/picture.h tools/report.h \
		include/noclobber_intree.h $(STLIB) $(CONFORM_H)
	$(CC) $(CFLAGS) $(TOOL_CFLAGS) $(LITE_DEFS) $(LDFLAGS) -o $@ \
		$(LITE_SRC) $(STLIB) $(LDLIBS_NCB)

$(CONFORM): $(CONFORM_SRC) tools/conform/main.c tools/json.c tools/cli.h \
		$(CONFORM_H)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(TOOL_CFLAGS) $(LDFLAGS) $(CONFORM_STATIC) -o $@ \
		$(CONFORM_SRC) tools/conform/main.c tools/json.c -pthread

# Tests and benchmarks link the static libraries to reach internal paths.
$(O)/tests/t-%: tests/t-%.c tests/harness.h tests/ncbtest.h tests/elfgen.h \
		$(LIB_H) $(WATCH_H) $(STLIB) $(WATCH_LIB) tools/conform/oracle.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(NCB_CFLAGS) -Itools $(LDFLAGS) -o $@ $< \
		$(WATCH_LIB) $(STLIB) $(LDLIBS_NCB)

$(O)/tests/t-%-core: tests/t-%.c tests/core/shim.c src/mmap.c src/mremap.c \
		tests/harness.h tests/ncbtest.h include/noclobber_core.h \
		src/internal.h $(STLIB) tools/conform/oracle.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(NCB_CFLAGS) $(LDFLAGS) -o $@ $< tests/core/shim.c \
		$(STLIB) $(LDLIBS_NCB)

# The HTML report of recorded clobbers, for tests/pictures.sh: the
# report's writer and the pictures' as the tool has them.
PICTURE_SRC := tools/picture.c tools/util.c tools/json.c tools/mapping.c
REPORT_SRC := tools/report.c $(PICTURE_SRC)
$(O)/tests/mkreport: tests/mkreport.c $(REPORT_SRC) tools/report.h \
		tools/picture.h tools/cli.h include/noclobber_intree.h $(STLIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(TOOL_CFLAGS) $(LDFLAGS) -o $@ $< $(REPORT_SRC) \
		$(STLIB) $(LDLIBS_NCB)

# Writes the generator's ELF images for the shell tests.
$(O)/tests/mkelf: tests/mkelf.c tests/elfgen.h $(LIB_H)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(NCB_CFLAGS) $(LDFLAGS) -o $@ $<

$(O)/tests/ncb-emu: tests/ncb-emu.c tests/faults.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(NCB_CFLAGS) $(LDFLAGS) -o $@ $< -lseccomp

# The pictures' benchmark draws with the tool's own writer.
$(O)/bench/b-picture: bench/b-picture.c bench/bench.h $(PICTURE_SRC) \
		tools/picture.h tools/cli.h $(STLIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(NCB_CFLAGS) -Itools $(LDFLAGS) -o $@ $< \
		$(PICTURE_SRC) $(STLIB) $(LDLIBS_NCB)

$(O)/bench/b-%: bench/b-%.c bench/bench.h $(STLIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(NCB_CFLAGS) $(LDFLAGS) -o $@ $< $(STLIB) $(LDLIBS_NCB)

tests: $(TEST_BIN) $(O)/tests/mkelf $(O)/tests/mkreport
test-helpers: $(TEST_HELPERS)
# A program for b-exec: exits at its entry, no libc.
$(O)/bench/exit0: bench/exit0.c
	@mkdir -p $(@D)
	$(CC) -O2 -static -nostdlib -fno-stack-protector -o $@ $<

# b-watch's mmap-heavy program: plain libc, as a traced program would be.
$(O)/bench/mmap-churn: bench/mmap-churn.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(NCB_CFLAGS) $(LDFLAGS) -o $@ $<

# b-watch's floor: stops at the fixed placements alone, and no judging.
$(O)/bench/bare-trace: bench/bare-trace.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(NCB_CFLAGS) $(LDFLAGS) -o $@ $< -lseccomp

# b-watch's floor under --preload: an empty object, preloaded.
$(O)/bench/libempty-preload.so: bench/empty-preload.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -fPIC -o $@ $<

benches: $(BENCH_BIN) $(O)/bench/exit0 $(O)/bench/mmap-churn \
	$(O)/bench/bare-trace $(O)/bench/libempty-preload.so

check:
	tests/matrix.sh

# Every item of the VM rows (make check runs a smaller set in them).
check-vm:
	NCB_ROWS='vm-*' NCB_VM_SET=all tests/matrix.sh

demo: all
	$(TOOL) probe
	@echo
	$(TOOL) demo
	@echo
	$(TOOL) exec --plan ls
	@echo
	$(TOOL) exec /bin/echo "echo, loaded by noclobber exec: nothing clobbered"

# The pictures of README.md and docs/, drawn from the maps of real
# processes recorded beside them (docs/pictures/NAME.maps, named in the
# picture as NAME.maps): the same input gives the same bytes.
DOC_MAPS := $(wildcard docs/pictures/*.maps)
docs: $(TOOL)
	@for m in $(DOC_MAPS:docs/pictures/%=%); do \
		(cd docs/pictures && $(abspath $(TOOL)) maps --svg --maps $$m \
		> $${m%.maps}.svg.tmp && mv $${m%.maps}.svg.tmp \
		$${m%.maps}.svg) || exit 1; \
		echo "docs/pictures/$${m%.maps}.svg"; \
	done

bench: all benches
	bench/run.sh $(O)

# libFuzzer with ASan and UBSan (clang); new inputs go to $(O)/fuzz/corpus,
# the seeds kept in fuzz/corpus are read too.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS := -O1 -g -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined
FUZZ_BIN := $(O)/fuzz/maps_text $(O)/fuzz/model_ops $(O)/fuzz/elf_parse

$(O)/fuzz/%: fuzz/%.c $(LIB_SRC) $(LIB_H)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(NCB_CFLAGS) -o $@ $< $(LIB_SRC)

# A long soak: t-faults' threads and child under injected ENOMEM in each
# kernel's behaviour, SOAK_OPS calls a thread (make check runs a short
# one in its faults row), each run's injected failures counted.
SOAK_OPS ?= 20000
SOAK_SEED ?= 1
soak: tests test-helpers
	@for m in native old 4.17 native@6.1.0; do \
	for u in "" --unmap-first; do \
		echo "== soak: $$m $$u"; \
		case $$m in *@*) r="tests/with-release.sh $${m#*@}";; \
		*) r=;; esac; \
		NCB_SOAK_OPS=$(SOAK_OPS) NCB_FAULTS_UNMAP_FIRST=$${u:+1} \
		$$r $(O)/tests/ncb-emu --mode=$${m%@*} --faults=25 \
		--seed=$(SOAK_SEED) $$u --stats $(O)/tests/t-faults soak || \
		exit 1; \
	done; done

fuzz-build: $(FUZZ_BIN)

fuzz: $(FUZZ_BIN)
	@mkdir -p $(O)/fuzz/corpus/maps_text $(O)/fuzz/corpus/model_ops \
		$(O)/fuzz/corpus/elf_parse
	$(O)/fuzz/maps_text -max_total_time=$(FUZZ_SECONDS) \
		$(O)/fuzz/corpus/maps_text fuzz/corpus/maps_text
	$(O)/fuzz/model_ops -max_total_time=$(FUZZ_SECONDS) \
		$(O)/fuzz/corpus/model_ops fuzz/corpus/model_ops
	$(O)/fuzz/elf_parse -max_total_time=$(FUZZ_SECONDS) \
		$(O)/fuzz/corpus/elf_parse fuzz/corpus/elf_parse

# After adding a release's version node: keep its interface as released.
abi-dump: all
	sh tests/abi.sh $(O) --dump

install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(BINDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 \
		$(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(DOCDIR)/examples
	install -m 644 $(STLIB) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHLIB) $(PRELOAD) $(DESTDIR)$(LIBDIR)/
	ln -sf libnoclobber.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libnoclobber.so
	install -m 644 include/noclobber.h include/noclobber_core.h \
		$(DESTDIR)$(INCLUDEDIR)/
	install -m 755 $(TOOL) $(CONFORM) $(DESTDIR)$(BINDIR)/
	$(if $(filter 1,$(WATCH)),install -D -m 755 $(HELPER) \
		$(DESTDIR)$(HELPER_PATH))
	$(if $(COMPAT_LOADER),install -D -m 755 $(TOOL) \
		$(DESTDIR)$(LIBDIR)/noclobber/noclobber)
	install -m 644 man/man1/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 man/man3/*.3 $(DESTDIR)$(MANDIR)/man3/
	install -m 644 man/man7/*.7 $(DESTDIR)$(MANDIR)/man7/
	install -m 644 examples/*.c $(DESTDIR)$(DOCDIR)/examples/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		noclobber.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/noclobber.pc

# O= given: that build only; else every build.
clean:
	rm -rf $(if $(filter command line environment,$(origin O)),$(O),build)

.PHONY: fuzz-build demo all tests test-helpers benches check check-vm bench \
	fuzz install clean abi-dump soak docs
