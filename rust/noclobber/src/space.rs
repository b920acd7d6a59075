//! The model: Linux's mmap rules on an address space held in memory
//! (`ncb_as_new(3)`), for emulators, sandboxes and planners.
use crate::error::{check, Result};
use crate::maps::MapEntry;
use crate::memory::Prot;
use crate::near::Place;
use noclobber_sys as sys;
use std::ffi::CString;
use std::ops::BitOr;
use std::ptr::NonNull;

/// `MAP_*` flags for [`AddressSpace::mmap`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MapFlags(i32);

impl MapFlags {
    /// `MAP_SHARED`.
    pub const SHARED: MapFlags = MapFlags(sys::MAP_SHARED);
    /// `MAP_PRIVATE`.
    pub const PRIVATE: MapFlags = MapFlags(sys::MAP_PRIVATE);
    /// `MAP_FIXED`: replaces what is there, as the kernel does.
    pub const FIXED: MapFlags = MapFlags(sys::MAP_FIXED);
    /// `MAP_FIXED_NOREPLACE`.
    pub const FIXED_NOREPLACE: MapFlags =
        MapFlags(sys::NCB_MAP_FIXED_NOREPLACE);
    /// `MAP_ANONYMOUS`.
    pub const ANONYMOUS: MapFlags = MapFlags(sys::MAP_ANONYMOUS);
    /// `MAP_NORESERVE`.
    pub const NORESERVE: MapFlags = MapFlags(sys::MAP_NORESERVE);

    /// The bits.
    pub const fn bits(self) -> i32 {
        self.0
    }

    /// From `MAP_*` bits.
    pub const fn from_bits(bits: i32) -> MapFlags {
        MapFlags(bits)
    }
}

impl BitOr for MapFlags {
    type Output = MapFlags;
    fn bitor(self, o: MapFlags) -> MapFlags {
        MapFlags(self.0 | o.0)
    }
}

/// The machine a model is of (`struct ncb_as_opts`); 0 takes this
/// machine's or this process's value, as the manual page says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpaceOptions {
    /// Its page size.
    pub page_size: u64,
    /// `vm.mmap_min_addr`.
    pub mmap_min_addr: u64,
    /// Where the top-down search starts (0: task_size less 128 MiB, as
    /// without ASLR).
    pub mmap_base: u64,
    /// The top of the user address space.
    pub task_size: u64,
    /// The gap kept below a stack (0: 256 pages).
    pub stack_guard_gap: u64,
    /// `vm.max_map_count` (0: 65530).
    pub max_map_count: u32,
    /// THP-align 2 MiB anonymous maps: 1 yes, -1 no, 0 as the
    /// release does for this process.
    pub thp: i32,
    /// Where the heap starts (0: from a loaded `[heap]`, else none).
    pub start_brk: u64,
    /// Where it ends.
    pub brk: u64,
    /// The kernel release whose rules apply, as `major << 16 | minor << 8
    /// | patch` (0: the running kernel's).
    pub release: u32,
}

/// An address space held in memory, with the kernel's rules: where mmap
/// would put a mapping, what `MAP_FIXED` would replace, what
/// `/proc/PID/maps` would then say.  A model takes no lock: `&mut self`
/// calls one at a time, `&self` calls together (`Send` and `Sync`, as
/// `ncb_as_new(3)` ATTRIBUTES allow).
///
/// ```
/// use noclobber::{AddressSpace, MapFlags, Prot};
///
/// let mut s = AddressSpace::new()?;
/// let anon = MapFlags::PRIVATE | MapFlags::ANONYMOUS;
/// let a = s.mmap(0x10000, 0x4000, Prot::READ, anon | MapFlags::FIXED)?;
/// assert_eq!(a, 0x10000);
/// // No-clobber: refused over it, as the kernel would.
/// let noreplace = anon | MapFlags::FIXED_NOREPLACE;
/// assert!(s.mmap(0x12000, 0x1000, Prot::READ, noreplace).is_err());
/// s.mprotect(0x11000, 0x1000, Prot::READ | Prot::WRITE)?;
/// assert_eq!(s.count(), 3);
/// assert_eq!(s.find(0x11000)?.unwrap().prot, Prot::READ | Prot::WRITE);
/// print!("{}", s.dump());
/// # Ok::<(), noclobber::Error>(())
/// ```
#[derive(Debug)]
pub struct AddressSpace {
    raw: NonNull<sys::ncb_as>,
}

// SAFETY: no lock and no thread affinity: Rust's borrows give the one
// writer or the many readers the C side asks for.
unsafe impl Send for AddressSpace {}
unsafe impl Sync for AddressSpace {}

impl AddressSpace {
    /// An empty space of this machine and process.
    pub fn new() -> Result<AddressSpace> {
        Self::with_options(&SpaceOptions::default())
    }

    /// An empty space of the machine `opts` describes.
    pub fn with_options(opts: &SpaceOptions) -> Result<AddressSpace> {
        let mut o = <sys::ncb_as_opts as sys::Init>::init();
        o.page_size = opts.page_size;
        o.mmap_min_addr = opts.mmap_min_addr;
        o.mmap_base = opts.mmap_base;
        o.task_size = opts.task_size;
        o.stack_guard_gap = opts.stack_guard_gap;
        o.max_map_count = opts.max_map_count;
        o.thp = opts.thp;
        o.start_brk = opts.start_brk;
        o.brk = opts.brk;
        o.release = opts.release;
        let mut raw = std::ptr::null_mut();
        // SAFETY: options with their size set, an out pointer.
        check(unsafe { sys::ncb_as_new(&mut raw, &o) })?;
        Ok(AddressSpace {
            raw: NonNull::new(raw).expect("ncb_as_new gave no space"),
        })
    }

    /// Load the text of a `/proc/PID/maps`.
    pub fn load(&mut self, maps: &str) -> Result<()> {
        // SAFETY: our space, the text and its length.
        check(unsafe {
            sys::ncb_as_load(
                self.raw.as_ptr(),
                maps.as_ptr().cast(),
                maps.len(),
            )
        })?;
        Ok(())
    }

    /// Register a file for file-backed mappings: its number.
    pub fn file(
        &mut self,
        path: &str,
        dev: (u32, u32),
        inode: u64,
    ) -> Result<u32> {
        let p = CString::new(path).map_err(|_| crate::Error::from_errno(22))?;
        let mut file = 0;
        // SAFETY: our space, a C string, an out pointer.
        check(unsafe {
            sys::ncb_as_file(
                self.raw.as_ptr(),
                p.as_ptr(),
                dev.0,
                dev.1,
                inode,
                &mut file,
            )
        })?;
        Ok(file)
    }

    /// mmap of anonymous memory: where it went.
    pub fn mmap(
        &mut self,
        addr: u64,
        len: u64,
        prot: Prot,
        flags: MapFlags,
    ) -> Result<u64> {
        self.mmap_file(addr, len, prot, flags, 0, 0)
    }

    /// mmap of a file [`file`](AddressSpace::file) registered (0:
    /// anonymous): where it went.
    pub fn mmap_file(
        &mut self,
        addr: u64,
        len: u64,
        prot: Prot,
        flags: MapFlags,
        file: u32,
        offset: u64,
    ) -> Result<u64> {
        let mut at = 0;
        // SAFETY: our space, an out pointer.
        check(unsafe {
            sys::ncb_as_mmap(
                self.raw.as_ptr(),
                addr,
                len,
                prot.bits(),
                flags.0,
                file,
                offset,
                &mut at,
            )
        })?;
        Ok(at)
    }

    /// munmap.
    pub fn munmap(&mut self, addr: u64, len: u64) -> Result<()> {
        // SAFETY: our space.
        check(unsafe { sys::ncb_as_munmap(self.raw.as_ptr(), addr, len) })?;
        Ok(())
    }

    /// mprotect.
    pub fn mprotect(&mut self, addr: u64, len: u64, prot: Prot) -> Result<()> {
        // SAFETY: our space.
        check(unsafe {
            sys::ncb_as_mprotect(self.raw.as_ptr(), addr, len, prot.bits())
        })?;
        Ok(())
    }

    /// mremap (`MREMAP_*` flags): where it is now.
    pub fn mremap(
        &mut self,
        addr: u64,
        old_len: u64,
        new_len: u64,
        flags: i32,
        new_addr: u64,
    ) -> Result<u64> {
        let mut at = 0;
        // SAFETY: our space, an out pointer.
        check(unsafe {
            sys::ncb_as_mremap(
                self.raw.as_ptr(),
                addr,
                old_len,
                new_len,
                flags,
                new_addr,
                &mut at,
            )
        })?;
        Ok(at)
    }

    /// brk: the break after it, as the kernel returns it.
    pub fn brk(&mut self, brk: u64) -> Result<u64> {
        let mut now = 0;
        // SAFETY: our space, an out pointer.
        check(unsafe { sys::ncb_as_brk(self.raw.as_ptr(), brk, &mut now) })?;
        Ok(now)
    }

    /// The first area that ends above `addr`, which need not contain it
    /// (as the kernel's `find_vma`).
    pub fn find(&self, addr: u64) -> Result<Option<MapEntry>> {
        let mut m = <sys::ncb_mapping as sys::Init>::init();
        // SAFETY: our space, a mapping with its size set; the path is
        // read before any change to the space.
        let found = check(unsafe {
            sys::ncb_as_find(self.raw.as_ptr(), addr, &mut m)
        })?;
        Ok((found == 1).then(|| unsafe { MapEntry::from_raw(&m) }))
    }

    /// Where `len` bytes fit in `[lo, hi)` at `align`, as `place` says.
    pub fn find_free(
        &self,
        lo: u64,
        hi: u64,
        len: u64,
        align: u64,
        place: Place,
    ) -> Result<u64> {
        let mut at = 0;
        // SAFETY: our space, an out pointer.
        check(unsafe {
            sys::ncb_as_find_free(
                self.raw.as_ptr(),
                lo,
                hi,
                len,
                align,
                place.raw(),
                &mut at,
            )
        })?;
        Ok(at)
    }

    /// How many areas it holds.
    pub fn count(&self) -> usize {
        // SAFETY: our space.
        unsafe { sys::ncb_as_count(self.raw.as_ptr()) }
    }

    /// What `/proc/PID/maps` would say.
    pub fn dump(&self) -> String {
        // SAFETY: our space; the first call with no buffer says the length.
        let n = unsafe {
            sys::ncb_as_dump(self.raw.as_ptr(), std::ptr::null_mut(), 0)
        };
        let mut buf = vec![0u8; n + 1];
        // SAFETY: a buffer of n + 1 bytes.
        unsafe {
            sys::ncb_as_dump(
                self.raw.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        };
        buf.truncate(n);
        String::from_utf8_lossy(&buf).into_owned()
    }
}

impl Drop for AddressSpace {
    fn drop(&mut self) {
        // SAFETY: ours, freed once.
        unsafe { sys::ncb_as_free(self.raw.as_ptr()) }
    }
}
