//! The C API of libnoclobber, as `include/noclobber.h` declares it: its
//! structs (`#[repr(C)]`), constants and functions, unchanged.  Each is
//! documented in its section 3 manual page (`man ncb_find_near`).
//!
//! Written by hand, and kept in step with the header by this crate's
//! tests: a C compiler checks every struct's size and field offsets, every
//! constant and every function's prototype as recorded here against the
//! header itself, and every function of the header must be declared here.
//! Everything is `unsafe` to call, as any C function is; the `noclobber`
//! crate is the safe API.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_long, c_uint, c_void};

/// `pid_t` of the C library (Linux: `int`).
pub type pid_t = c_int;
/// `off_t` of the C library as the library was built: without
/// `_FILE_OFFSET_BITS=64`, a `long`.
pub type off_t = c_long;

/// A field, its offset and its size, for the header check.
#[doc(hidden)]
pub type FieldLayout = (&'static str, usize, usize);

/// The layout of a struct as declared here, for the header check.
#[doc(hidden)]
pub trait Layout {
    const NAME: &'static str;
    fn fields() -> Vec<FieldLayout>;
}

/// Every struct here, by name, with its size and its fields' layout.
#[doc(hidden)]
pub type StructLayout = (&'static str, usize, Vec<FieldLayout>);

macro_rules! ncb_structs {
    ($($(#[$m:meta])*
       pub struct $name:ident { $(pub $f:ident: $t:ty,)* })*) => {
        $(
            $(#[$m])*
            #[repr(C)]
            #[derive(Clone, Copy, Debug)]
            pub struct $name { $(pub $f: $t,)* }

            impl Layout for $name {
                const NAME: &'static str = stringify!($name);
                fn fields() -> Vec<FieldLayout> {
                    let u = std::mem::MaybeUninit::<Self>::uninit();
                    let base = u.as_ptr();
                    vec![$(
                        (stringify!($f),
                         // SAFETY: the address of a field of memory
                         // that is there; nothing is read.
                         unsafe { std::ptr::addr_of!((*base).$f) } as usize
                             - base as usize,
                         std::mem::size_of::<$t>()),
                    )*]
                }
            }
        )*

        /// Every struct's layout, for the header check.
        #[doc(hidden)]
        pub fn struct_layouts() -> Vec<StructLayout> {
            vec![$((stringify!($name), std::mem::size_of::<$name>(),
                    <$name as Layout>::fields()),)*]
        }
    };
}

/// Structs whose first field is `size`: zero-filled with `size` set, as
/// `NCB_INIT` makes them.
pub trait Init: Sized {
    /// All zero but `size`, which is `size_of::<Self>()`.
    fn init() -> Self;
}

macro_rules! ncb_init {
    ($($name:ident)*) => {
        $(impl Init for $name {
            fn init() -> Self {
                // SAFETY: every field is an integer, a raw pointer or an
                // Option of a function pointer: all zero is valid.
                let mut s: Self = unsafe { std::mem::zeroed() };
                s.size = std::mem::size_of::<Self>();
                s
            }
        })*
    };
}

ncb_structs! {
    /// `struct ncb_probe`: `ncb_kernel_probe(3)`.
    pub struct ncb_probe {
        pub size: usize,
        pub noreplace: c_int,
        pub procmap_query: c_int,
        pub page_size: std::os::raw::c_ulong,
        pub mmap_min_addr: std::os::raw::c_ulong,
    }

    /// `struct ncb_mapping`: `ncb_maps_next(3)`.
    pub struct ncb_mapping {
        pub size: usize,
        pub start: u64,
        pub end: u64,
        pub offset: u64,
        pub inode: u64,
        pub dev_major: u32,
        pub dev_minor: u32,
        pub prot: c_int,
        pub shared: c_int,
        pub path: *const c_char,
    }

    /// `struct ncb_reach`: `ncb_reach(3)`.
    pub struct ncb_reach {
        pub size: usize,
        pub min: i64,
        pub max: i64,
        pub page: u64,
        pub step: u32,
        pub from_next: c_int,
        pub name: *const c_char,
    }

    /// `struct ncb_near_opts`: `ncb_find_near(3)`.
    pub struct ncb_near_opts {
        pub size: usize,
        pub align: usize,
        pub place: c_int,
        pub reserved: c_int,
        pub reach: c_int,
        pub machine: c_int,
    }

    /// `struct ncb_near_gap`: `ncb_find_near(3)`.
    pub struct ncb_near_gap {
        pub start: u64,
        pub end: u64,
    }

    /// `struct ncb_near`: `ncb_find_near(3)`.
    pub struct ncb_near {
        pub size: usize,
        pub addr: u64,
        pub why: c_int,
        pub nlisted: c_uint,
        pub lo: u64,
        pub hi: u64,
        pub free: u64,
        pub ngaps: u64,
        pub nmaps: u64,
        pub gaps: [ncb_near_gap; NCB_NEAR_GAPS],
    }

    /// `struct ncb_resv_opts`: `ncb_resv_new(3)`.
    pub struct ncb_resv_opts {
        pub size: usize,
        pub lo: u64,
        pub hi: u64,
        pub align: usize,
        pub place: c_int,
        pub near_lo: u64,
        pub near_hi: u64,
        pub reach: c_int,
        pub machine: c_int,
    }

    /// `struct ncb_as_opts`: `ncb_as_new(3)`.
    pub struct ncb_as_opts {
        pub size: usize,
        pub page_size: u64,
        pub mmap_min_addr: u64,
        pub mmap_base: u64,
        pub task_size: u64,
        pub stack_guard_gap: u64,
        pub max_map_count: u32,
        pub thp: c_int,
        pub start_brk: u64,
        pub brk: u64,
        pub release: u32,
    }

    /// `struct ncb_elf_info`: `ncb_elf_info(3)`.
    pub struct ncb_elf_info {
        pub size: usize,
        pub type_: c_int,
        pub machine: c_int,
        pub entry: u64,
        pub lo: u64,
        pub hi: u64,
        pub align: u64,
        pub nsegs: c_uint,
        pub phnum: c_uint,
        pub phdr: u64,
        pub interp: *const c_char,
        pub exec_stack: c_int,
    }

    /// `struct ncb_elf_arch`: `ncb_elf_arch(3)`.
    pub struct ncb_elf_arch {
        pub size: usize,
        pub elf_class: c_int,
        pub data: c_int,
        pub machine: c_int,
        pub native: c_int,
        pub name: *const c_char,
        pub page_size: u64,
        pub min_page: u64,
        pub max_page: u64,
        pub page_fit: u64,
    }

    /// `struct ncb_elf_seg`: `ncb_elf_segment(3)`.
    pub struct ncb_elf_seg {
        pub size: usize,
        pub vaddr: u64,
        pub memsz: u64,
        pub filesz: u64,
        pub offset: u64,
        pub align: u64,
        pub prot: c_int,
    }

    /// `struct ncb_elf_image`: `ncb_elf_load(3)`.
    pub struct ncb_elf_image {
        pub size: usize,
        pub bias: u64,
        pub start: u64,
        pub end: u64,
        pub entry: u64,
        pub phdr: u64,
        pub brk: u64,
        pub resv: *mut ncb_resv,
    }

    /// `struct ncb_elf_load_opts`: `ncb_elf_load(3)`.
    pub struct ncb_elf_load_opts {
        pub size: usize,
        pub base: u64,
    }

    /// `struct ncb_exec_opts`: `ncb_exec(3)`.
    pub struct ncb_exec_opts {
        pub size: usize,
        pub base: u64,
        pub stack_size: usize,
        pub execfn: *const c_char,
        pub flags: c_uint,
        pub exe: c_int,
    }

    /// `struct ncb_exec_identity`: `ncb_exec_identity(3)`.
    pub struct ncb_exec_identity {
        pub size: usize,
        pub mm_map: c_int,
        pub comm: c_int,
        pub exe: c_int,
    }

    /// `struct ncb_exec_layout`: `ncb_exec_layout(3)`.
    pub struct ncb_exec_layout {
        pub size: usize,
        pub base: u64,
        pub brk: u64,
    }
}

ncb_init! {
    ncb_probe ncb_mapping ncb_reach ncb_near_opts ncb_near ncb_resv_opts
    ncb_as_opts ncb_elf_info ncb_elf_arch ncb_elf_seg ncb_elf_image
    ncb_elf_load_opts ncb_exec_opts ncb_exec_identity ncb_exec_layout
}

/// The opaque handles.
#[repr(C)]
pub struct ncb_maps {
    _private: [u8; 0],
}
#[repr(C)]
pub struct ncb_resv {
    _private: [u8; 0],
}
#[repr(C)]
pub struct ncb_as {
    _private: [u8; 0],
}
#[repr(C)]
pub struct ncb_elf {
    _private: [u8; 0],
}

/// `ncb_mapping_fn`: `ncb_maps_occupants(3)`'s callback.
pub type ncb_mapping_fn = Option<
    unsafe extern "C" fn(m: *const ncb_mapping, arg: *mut c_void) -> c_int,
>;

macro_rules! ncb_consts {
    ($($name:ident: $t:ty = $v:expr;)*) => {
        $(pub const $name: $t = $v;)*
        /// Every constant, for the header check.
        #[doc(hidden)]
        pub const CONSTANTS: &[(&str, i64)] =
            &[$((stringify!($name), $v as i64),)*];
    };
}

ncb_consts! {
    NCB_VERSION_MAJOR: c_uint = 1;
    NCB_VERSION_MINOR: c_uint = 2;
    NCB_VERSION_PATCH: c_uint = 0;
    NCB_NOREPLACE_HONOURED: c_int = 1;
    NCB_NOREPLACE_IGNORED: c_int = 2;
    NCB_NOREPLACE_PARTIAL: c_int = 3;
    NCB_NOREPLACE_REJECTED: c_int = 4;
    NCB_NOREPLACE_REPLACES: c_int = 5;
    NCB_PLACE_ANY: c_int = 0;
    NCB_PLACE_LOWEST: c_int = 1;
    NCB_PLACE_HIGHEST: c_int = 2;
    NCB_PLACE_RANDOM: c_int = 3;
    NCB_REACH_BRANCH: c_int = 1;
    NCB_REACH_PCREL: c_int = 2;
    NCB_NEAR_GAPS: usize = 8;
    NCB_NEAR_PLACED: c_int = 0;
    NCB_NEAR_OUTSIDE: c_int = 1;
    NCB_NEAR_SMALL: c_int = 2;
    NCB_NEAR_FULL: c_int = 3;
    NCB_NEAR_ALIGN: c_int = 4;
    NCB_ELF_NOT_ELF: c_int = 0;
    NCB_ELF_PROGRAM: c_int = 1;
    NCB_ELF_OBJECT: c_int = 2;
    NCB_ELF_CORE: c_int = 3;
    NCB_ELF_DEBUG: c_int = 4;
    NCB_ELF_OTHER: c_int = 5;
    NCB_ELF_ANY_ARCH: c_int = 1;
    NCB_EXEC_UNPRIVILEGED: c_uint = 1;
    NCB_EXE_AUTO: c_int = 0;
    NCB_EXE_INTERP: c_int = 1;
    NCB_EXE_OFF: c_int = 2;
    NCB_EXE_SET: c_int = 3;
    NCB_MAP_FIXED_NOREPLACE: c_int = 0x100000;
    PROT_NONE: c_int = 0;
    PROT_READ: c_int = 1;
    PROT_WRITE: c_int = 2;
    PROT_EXEC: c_int = 4;
    MAP_SHARED: c_int = 1;
    MAP_PRIVATE: c_int = 2;
    MAP_FIXED: c_int = 0x10;
    MAP_ANONYMOUS: c_int = 0x20;
    MAP_NORESERVE: c_int = MAP_NORESERVE_VALUE;
    MREMAP_MAYMOVE: c_int = 1;
    MREMAP_FIXED: c_int = 2;
}

// powerpc's MAP_NORESERVE is its own (arch/powerpc/include/uapi/asm/mman.h).
#[cfg(target_arch = "powerpc64")]
const MAP_NORESERVE_VALUE: c_int = 0x40;
#[cfg(not(target_arch = "powerpc64"))]
const MAP_NORESERVE_VALUE: c_int = 0x4000;

/// The `MAP_FAILED` of `ncb_mmap(3)` and `ncb_mremap(3)`.
pub const MAP_FAILED: *mut c_void = !0 as *mut c_void;

macro_rules! ncb_functions {
    ($(pub fn $name:ident($($arg:ident: $t:ty),* $(,)?) $(-> $ret:ty)?;)*) => {
        // Linked as build.rs says: the shared library, or the static one.
        extern "C" {
            $(pub fn $name($($arg: $t),*) $(-> $ret)?;)*
        }

        /// Every function: its name, its parameters' types and its return
        /// type as written here, for the header check.
        #[doc(hidden)]
        pub const FUNCTIONS: &[(&str, &[&str], &str)] = &[
            $((stringify!($name), &[$(stringify!($t)),*],
               ncb_functions!(@ret $($ret)?)),)*
        ];
    };
    (@ret) => { "()" };
    (@ret $ret:ty) => { stringify!($ret) };
}

ncb_functions! {
    pub fn ncb_version() -> c_uint;
    pub fn ncb_kernel_probe(probe: *mut ncb_probe) -> c_int;
    pub fn ncb_noreplace_name(noreplace: c_int) -> *const c_char;
    pub fn ncb_mmap(addr: *mut c_void, len: usize, prot: c_int, flags: c_int,
                    fd: c_int, offset: off_t) -> *mut c_void;
    pub fn ncb_mremap(old_addr: *mut c_void, old_len: usize, new_len: usize,
                      flags: c_int, new_addr: *mut c_void) -> *mut c_void;
    pub fn ncb_maps_open(maps: *mut *mut ncb_maps, pid: pid_t) -> c_int;
    pub fn ncb_maps_seek(maps: *mut ncb_maps, addr: u64) -> c_int;
    pub fn ncb_maps_next(maps: *mut ncb_maps, m: *mut ncb_mapping) -> c_int;
    pub fn ncb_maps_find(maps: *mut ncb_maps, addr: u64,
                         m: *mut ncb_mapping) -> c_int;
    pub fn ncb_maps_close(maps: *mut ncb_maps);
    pub fn ncb_maps_occupants(pid: pid_t, addr: *const c_void, len: usize,
                              f: ncb_mapping_fn, arg: *mut c_void) -> c_int;
    pub fn ncb_range_free(addr: *const c_void, len: usize) -> c_int;
    pub fn ncb_find_free(lo: u64, hi: u64, len: usize, align: usize,
                         place: c_int, addr: *mut u64) -> c_int;
    pub fn ncb_reach(machine: c_int, kind: c_int,
                     reach: *mut ncb_reach) -> c_int;
    pub fn ncb_find_near(pid: pid_t, near_lo: u64, near_hi: u64,
                         within: u64, len: usize,
                         opts: *const ncb_near_opts,
                         out: *mut ncb_near) -> c_int;
    pub fn ncb_resv_new(resv: *mut *mut ncb_resv, addr: *mut c_void,
                        len: usize, opts: *const ncb_resv_opts) -> c_int;
    pub fn ncb_resv_addr(resv: *const ncb_resv) -> *mut c_void;
    pub fn ncb_resv_len(resv: *const ncb_resv) -> usize;
    pub fn ncb_resv_commit(resv: *mut ncb_resv, addr: *mut c_void,
                           len: usize, prot: c_int, flags: c_int, fd: c_int,
                           offset: off_t) -> c_int;
    pub fn ncb_resv_decommit(resv: *mut ncb_resv, addr: *mut c_void,
                             len: usize) -> c_int;
    pub fn ncb_resv_release(resv: *mut ncb_resv) -> c_int;
    pub fn ncb_as_new(space: *mut *mut ncb_as,
                      opts: *const ncb_as_opts) -> c_int;
    pub fn ncb_as_free(space: *mut ncb_as);
    pub fn ncb_as_load(space: *mut ncb_as, maps: *const c_char,
                       len: usize) -> c_int;
    pub fn ncb_as_file(space: *mut ncb_as, path: *const c_char,
                       dev_major: u32, dev_minor: u32, inode: u64,
                       file: *mut u32) -> c_int;
    pub fn ncb_as_mmap(space: *mut ncb_as, addr: u64, len: u64, prot: c_int,
                       flags: c_int, file: u32, offset: u64,
                       mapped: *mut u64) -> c_int;
    pub fn ncb_as_munmap(space: *mut ncb_as, addr: u64, len: u64) -> c_int;
    pub fn ncb_as_mremap(space: *mut ncb_as, addr: u64, old_len: u64,
                         new_len: u64, flags: c_int, new_addr: u64,
                         mapped: *mut u64) -> c_int;
    pub fn ncb_as_brk(space: *mut ncb_as, brk: u64, result: *mut u64) -> c_int;
    pub fn ncb_as_mprotect(space: *mut ncb_as, addr: u64, len: u64,
                           prot: c_int) -> c_int;
    pub fn ncb_as_find(space: *const ncb_as, addr: u64,
                       m: *mut ncb_mapping) -> c_int;
    pub fn ncb_as_find_free(space: *const ncb_as, lo: u64, hi: u64, len: u64,
                            align: u64, place: c_int,
                            addr: *mut u64) -> c_int;
    pub fn ncb_as_count(space: *const ncb_as) -> usize;
    pub fn ncb_as_dump(space: *const ncb_as, buf: *mut c_char,
                       size: usize) -> usize;
    pub fn ncb_elf_open(elf: *mut *mut ncb_elf, path: *const c_char,
                        why: *mut c_char, why_len: usize) -> c_int;
    pub fn ncb_elf_parse(elf: *mut *mut ncb_elf, image: *const c_void,
                         len: usize, why: *mut c_char,
                         why_len: usize) -> c_int;
    pub fn ncb_elf_open_flags(elf: *mut *mut ncb_elf, path: *const c_char,
                              flags: c_int, why: *mut c_char,
                              why_len: usize) -> c_int;
    pub fn ncb_elf_parse_flags(elf: *mut *mut ncb_elf, image: *const c_void,
                               len: usize, flags: c_int, why: *mut c_char,
                               why_len: usize) -> c_int;
    pub fn ncb_elf_kind(path: *const c_char) -> c_int;
    pub fn ncb_elf_kind_image(image: *const c_void, len: usize) -> c_int;
    pub fn ncb_elf_close(elf: *mut ncb_elf);
    pub fn ncb_elf_info(elf: *const ncb_elf, info: *mut ncb_elf_info) -> c_int;
    pub fn ncb_elf_arch(elf: *const ncb_elf, arch: *mut ncb_elf_arch) -> c_int;
    pub fn ncb_elf_segment(elf: *const ncb_elf, i: c_uint,
                           seg: *mut ncb_elf_seg) -> c_int;
    pub fn ncb_elf_notes(elf: *const ncb_elf) -> *const c_char;
    pub fn ncb_elf_load(elf: *mut ncb_elf, opts: *const ncb_elf_load_opts,
                        img: *mut ncb_elf_image, why: *mut c_char,
                        why_len: usize) -> c_int;
    pub fn ncb_elf_unload(img: *mut ncb_elf_image) -> c_int;
    pub fn ncb_elf_uses_origin(elf: *const ncb_elf) -> c_int;
    pub fn ncb_exec_identity(id: *mut ncb_exec_identity) -> c_int;
    pub fn ncb_exec_layout(elf: *const ncb_elf,
                           layout: *mut ncb_exec_layout) -> c_int;
    pub fn ncb_exec(path: *const c_char, argv: *const *mut c_char,
                    envp: *const *mut c_char, opts: *const ncb_exec_opts,
                    why: *mut c_char, why_len: usize) -> c_int;
}
