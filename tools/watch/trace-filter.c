/* SPDX-License-Identifier: MIT */
/*
 * The ptrace watcher's seccomp filter: the watched tree runs at full
 * speed but for the placements, at which it stops for the tracer
 * (SECCOMP_RET_TRACE, its tag the call: calls.h's enum): a fixed one to
 * be judged, a plain one so that its region's maker is known.  A loader's
 * spans of ELF objects (MAP_DENYWRITE) run unseen: the rules know an
 * object's mappings without.  Attached to a running process, where no
 * filter can be put, the same test is made at every call's entry
 * (trace_wanted).
 */
#include <errno.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include "noclobber.h"
#include "arch.h"
#include "trace.h"

/* calls.h's values are the system's, for the BPF target's sake. */
_Static_assert(WC_MAP_FIXED == MAP_FIXED, "MAP_FIXED");
_Static_assert(WC_MAP_ANONYMOUS == MAP_ANONYMOUS, "MAP_ANONYMOUS");
_Static_assert(WC_MAP_DENYWRITE == MAP_DENYWRITE, "MAP_DENYWRITE");
_Static_assert(WC_MAP_FIXED_NOREPLACE == NCB_MAP_FIXED_NOREPLACE,
	       "MAP_FIXED_NOREPLACE");
_Static_assert(WC_MAP_SHARED_VALIDATE == MAP_SHARED_VALIDATE,
	       "MAP_SHARED_VALIDATE");
_Static_assert(WC_MREMAP_FIXED == MREMAP_FIXED, "MREMAP_FIXED");
_Static_assert(WC_MAP_HUGETLB == MAP_HUGETLB &&
	       WC_MAP_HUGE_SHIFT == MAP_HUGE_SHIFT &&
	       WC_MAP_HUGE_MASK == MAP_HUGE_MASK, "MAP_HUGE");
_Static_assert(WC_SHM_RND == SHM_RND && WC_SHM_REMAP == SHM_REMAP, "SHM_");

/*
 * The call in a stop, by its ABI and number: a stop says what it is for
 * that way, not by the rule's tag, since libseccomp makes i386's ipc(2)
 * rules for a shmat rule, with shmat's tag and other arguments.
 */
/* The stop's ABI: 0 native, 1 the compat one, -1 another. */
static int abi_of(const struct syscall_info *si)
{
	if (warch.audit_compat && si->arch == warch.audit_compat)
		return 1;
	return si->arch == warch.audit ? 0 : -1;
}

/* The call's number in its ABI: an alias ABI's (x32) made native. */
static uint64_t nr_of(const struct syscall_info *si)
{
	if (abi_of(si) == 0 && warch.alias_bit)
		return si->seccomp.nr & ~warch.alias_bit;
	return si->seccomp.nr;
}

enum wcall trace_call_of(const struct syscall_info *si, int *compat)
{
	int abi = abi_of(si);

	*compat = abi == 1;
	return abi < 0 ? WC_NONE : wcall_of(*compat, nr_of(si));
}

/*
 * What the filter tests, for a process watched without one (attached):
 * whether a call's entry is a fixed placement.  The entry's number and
 * arguments are where a seccomp stop has them; old_mmap's are in memory,
 * read when the call is decoded.
 */
int trace_wanted(const struct syscall_info *si)
{
	int compat;
	enum wcall c = trace_call_of(si, &compat);

	return c == WC_OLD_MMAP || wcall_fixed(c, si->seccomp.args) ||
	       wcall_plain(c, si->seccomp.args) || trace_set_mm(si) ||
	       trace_escape(si) || trace_brk(si);
}

/*
 * prctl(PR_SET_MM): an in-process exec (ncb_exec's handover, a checkpoint
 * restored) gives the process a new program, whose exe link is set
 * there; with no execve to say so, the watcher sees it at this call.
 */
/* brk: what the break grows over is no region a record names. */
int trace_brk(const struct syscall_info *si)
{
	int abi = abi_of(si);

	return abi >= 0 && nr_of(si) == (abi ? WC_NR32_BRK : WC_NR_BRK);
}

enum wescape trace_escape(const struct syscall_info *si)
{
	int abi = abi_of(si);

	return abi < 0 ? WE_NONE : wcall_escape(abi, nr_of(si),
						 si->seccomp.args);
}

int trace_set_mm(const struct syscall_info *si)
{
	int abi = abi_of(si);

	return abi >= 0 &&
	       nr_of(si) == (abi ? WC_NR32_PRCTL : WC_NR_PRCTL) &&
	       (si->seccomp.args[0] & 0xffffffff) == WC_PR_SET_MM;
}

static int rule(scmp_filter_ctx f, enum wcall tag, int nr, unsigned int argc,
		struct scmp_arg_cmp a, struct scmp_arg_cmp b)
{
	if (argc == 2)
		return seccomp_rule_add(f, SCMP_ACT_TRACE(tag), nr, 2, a, b);
	if (argc == 1)
		return seccomp_rule_add(f, SCMP_ACT_TRACE(tag), nr, 1, a);
	return seccomp_rule_add(f, SCMP_ACT_TRACE(tag), nr, 0);
}

/*
 * The placements, tested in the filter itself as wcall_fixed and
 * wcall_plain test them: an mmap fixed or not (but a file's with
 * MAP_DENYWRITE), every mremap and shmat.  Masked tests only: libseccomp
 * compares the upper half of a 64-bit argument too, and an int flag's is
 * whatever the caller left there.  One filter per architecture, merged:
 * rules added to a filter of two architectures are copied by name, and
 * i386's mmap (old_mmap) takes a pointer to its arguments, so it stops
 * always; its shmat may come through ipc(2), whose call number the
 * kernel reads from the low 16 bits only.
 */
static int placements(scmp_filter_ctx f, int mmap_nr, int compat)
{
	struct scmp_arg_cmp none = SCMP_A0(SCMP_CMP_MASKED_EQ, 0, 0);
	uint64_t kind = WC_MAP_FIXED | WC_MAP_ANONYMOUS | WC_MAP_DENYWRITE;

	/* Fixed; anonymous; a file's but no span; both flags: no-replace. */
	return rule(f, WC_MMAP, mmap_nr, 1, SCMP_A3(SCMP_CMP_MASKED_EQ,
		    WC_MAP_FIXED | WC_MAP_FIXED_NOREPLACE, WC_MAP_FIXED),
		    none) ||
	       rule(f, WC_MMAP, mmap_nr, 1, SCMP_A3(SCMP_CMP_MASKED_EQ,
		    WC_MAP_FIXED | WC_MAP_ANONYMOUS, WC_MAP_ANONYMOUS),
		    none) ||
	       rule(f, WC_MMAP, mmap_nr, 1, SCMP_A3(SCMP_CMP_MASKED_EQ, kind,
		    0), none) ||
	       rule(f, WC_MMAP, mmap_nr, 1, SCMP_A3(SCMP_CMP_MASKED_EQ,
		    WC_MAP_FIXED | WC_MAP_FIXED_NOREPLACE, WC_MAP_FIXED |
		    WC_MAP_FIXED_NOREPLACE), none) ||
	       rule(f, WC_MREMAP, SCMP_SYS(mremap), 0, none, none) ||
	       rule(f, WC_SHMAT, SCMP_SYS(shmat), 0, none, none) ||
	       (compat && rule(f, WC_IPC, SCMP_SYS(ipc), 1,
			       SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffff,
				       WC_IPC_SHMAT), none));
}

/* The ways around the tracer (calls.h's wcall_escape). */
static int escapes(scmp_filter_ctx f)
{
	struct scmp_arg_cmp none = SCMP_A0(SCMP_CMP_MASKED_EQ, 0, 0);

	return rule(f, WC_NONE, SCMP_SYS(seccomp), 2,
		    SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff,
			    WC_SECCOMP_SET_MODE_FILTER),
		    SCMP_A1(SCMP_CMP_MASKED_EQ, WC_SECCOMP_FLAG_NEW_LISTENER,
			    WC_SECCOMP_FLAG_NEW_LISTENER)) ||
	       rule(f, WC_NONE, SCMP_SYS(ptrace), 1,
		    SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff, WC_PTRACE_ATTACH),
		    none) ||
	       rule(f, WC_NONE, SCMP_SYS(ptrace), 1,
		    SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff, WC_PTRACE_SEIZE),
		    none) ||
	       rule(f, WC_NONE, SCMP_SYS(brk), 0, none, none);
}

scmp_filter_ctx trace_filter_build(void)
{
	struct scmp_arg_cmp none = SCMP_A0(SCMP_CMP_MASKED_EQ, 0, 0);
	scmp_filter_ctx n = seccomp_init(SCMP_ACT_ALLOW);
	scmp_filter_ctx x = seccomp_init(SCMP_ACT_ALLOW);
	struct scmp_arg_cmp set_mm = SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff,
					     WC_PR_SET_MM);
	int r;

	/*
	 * x32's calls share the native AUDIT_ARCH_: without its own rules
	 * libseccomp's native filter takes them for a bad architecture and
	 * lets them run unseen.
	 */
	if (!n || !x || (warch.scmp_alias &&
			 seccomp_arch_add(n, warch.scmp_alias)))
		goto fail;
	r = placements(n, SCMP_SYS(mmap), 0) || escapes(n) ||
	    rule(n, WC_NONE, SCMP_SYS(prctl), 1, set_mm, none) ||
	    seccomp_arch_remove(x, SCMP_ARCH_NATIVE) ||
	    seccomp_arch_add(x, warch.scmp_compat) ||
	    placements(x, SCMP_SYS(mmap2), 1) || escapes(x) ||
	    rule(x, WC_OLD_MMAP, SCMP_SYS(mmap), 0, none, none) ||
	    rule(x, WC_NONE, SCMP_SYS(prctl), 1, set_mm, none);
	if (r || seccomp_merge(n, x))
		goto fail;
	/* x is n's now. */
	if (seccomp_attr_set(n, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW) ||
	    seccomp_attr_set(n, SCMP_FLTATR_API_SYSRAWRC, 1))
		goto fail_n;
	return n;
fail:
	if (x)
		seccomp_release(x);
fail_n:
	if (n)
		seccomp_release(n);
	return NULL;
}

/*
 * In the child, before execve: the filter, without no_new_privs where
 * this process may (CAP_SYS_ADMIN), so that set-user-ID programs keep
 * their privileges as without the watcher; with it otherwise, as the
 * kernel requires.  0, or -errno.
 */
int trace_filter_load(scmp_filter_ctx f)
{
	int r;

	if (!f)
		return -ENOMEM;
	r = seccomp_attr_set(f, SCMP_FLTATR_CTL_NNP, 0);
	if (!r)
		r = seccomp_load(f);
	if (r == -EACCES)
		r = seccomp_attr_set(f, SCMP_FLTATR_CTL_NNP, 1) ?:
		    seccomp_load(f);
	seccomp_release(f);
	return r;
}
