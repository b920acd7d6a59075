//! A process's mappings (`ncb_maps_open(3)`), and what occupies a range
//! (`ncb_maps_occupants(3)`).
use crate::error::{check, Result};
use crate::memory::Prot;
use noclobber_sys as sys;
use std::ffi::{CStr, OsStr, OsString};
use std::os::raw::{c_int, c_void};
use std::os::unix::ffi::OsStrExt;
use std::ptr::NonNull;

/// One mapping, as a line of `/proc/PID/maps`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapEntry {
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// Offset in the file.
    pub offset: u64,
    /// The file's inode, 0 if none.
    pub inode: u64,
    /// The file's device, (major, minor).
    pub dev: (u32, u32),
    /// Its protection.
    pub prot: Prot,
    /// A shared mapping ('s').
    pub shared: bool,
    /// Its path, or a name such as `[stack]`; empty for anonymous memory.
    pub path: OsString,
}

impl MapEntry {
    /// # Safety
    /// `m.path` is NULL or a NUL-terminated string.
    pub(crate) unsafe fn from_raw(m: &sys::ncb_mapping) -> Self {
        let path = if m.path.is_null() {
            OsString::new()
        } else {
            OsStr::from_bytes(CStr::from_ptr(m.path).to_bytes()).to_os_string()
        };
        MapEntry {
            start: m.start,
            end: m.end,
            offset: m.offset,
            inode: m.inode,
            dev: (m.dev_major, m.dev_minor),
            prot: Prot::from_bits(m.prot),
            shared: m.shared != 0,
            path,
        }
    }
}

/// An iterator over a process's mappings, lowest first.  One iterator
/// belongs to one thread at a time (`Send`, not `Sync`), as
/// `ncb_maps_open(3)` says.
pub struct Maps {
    raw: NonNull<sys::ncb_maps>,
    done: bool,
}

// SAFETY: an iterator may move between threads; only its calls must not
// run at once, which &mut self sees to.
unsafe impl Send for Maps {}

/// The mappings of process `pid` (0: this one), read from
/// `/proc/PID/maps` or the `PROCMAP_QUERY` ioctl.
///
/// ```
/// let stack = noclobber::maps(0)?
///     .filter_map(Result::ok)
///     .find(|m| m.path == "[stack]");
/// assert!(stack.is_some());
/// # Ok::<(), noclobber::Error>(())
/// ```
pub fn maps(pid: i32) -> Result<Maps> {
    let mut raw = std::ptr::null_mut();
    // SAFETY: an out pointer for the handle.
    check(unsafe { sys::ncb_maps_open(&mut raw, pid) })?;
    Ok(Maps {
        raw: NonNull::new(raw).expect("ncb_maps_open gave no handle"),
        done: false,
    })
}

impl Maps {
    /// Start again from the mapping containing or following `addr`.
    pub fn seek(&mut self, addr: u64) -> Result<()> {
        // SAFETY: our handle.
        check(unsafe { sys::ncb_maps_seek(self.raw.as_ptr(), addr) })?;
        self.done = false;
        Ok(())
    }

    /// The mapping containing `addr`, if any.
    pub fn find(&mut self, addr: u64) -> Result<Option<MapEntry>> {
        let mut m = <sys::ncb_mapping as sys::Init>::init();
        // SAFETY: our handle and a mapping with its size set; the path
        // is read before the next call.
        let found = check(unsafe {
            sys::ncb_maps_find(self.raw.as_ptr(), addr, &mut m)
        })?;
        Ok((found == 1).then(|| unsafe { MapEntry::from_raw(&m) }))
    }
}

impl Iterator for Maps {
    type Item = Result<MapEntry>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut m = <sys::ncb_mapping as sys::Init>::init();
        // SAFETY: as in find.
        match check(unsafe { sys::ncb_maps_next(self.raw.as_ptr(), &mut m) }) {
            Ok(1) => Some(Ok(unsafe { MapEntry::from_raw(&m) })),
            Ok(_) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl Drop for Maps {
    fn drop(&mut self) {
        // SAFETY: our handle, closed once.
        unsafe { sys::ncb_maps_close(self.raw.as_ptr()) }
    }
}

unsafe extern "C" fn collect(
    m: *const sys::ncb_mapping,
    arg: *mut c_void,
) -> c_int {
    let v = &mut *(arg as *mut Vec<MapEntry>);
    v.push(MapEntry::from_raw(&*m));
    0
}

/// What of process `pid` (0: this one) overlaps `[addr, addr + len)`.
pub(crate) fn occupants(
    pid: i32,
    addr: usize,
    len: usize,
) -> Result<Vec<MapEntry>> {
    let mut v: Vec<MapEntry> = Vec::new();
    // SAFETY: the callback gets our vector back, during the call only.
    check(unsafe {
        sys::ncb_maps_occupants(
            pid,
            addr as *const c_void,
            len,
            Some(collect),
            &mut v as *mut Vec<MapEntry> as *mut c_void,
        )
    })?;
    Ok(v)
}
