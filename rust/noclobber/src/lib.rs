//! Map memory at a fixed address without ever destroying what is already
//! there, on every kernel and emulator: the Rust API of libnoclobber.
//!
//! - [`map_at`]: anonymous memory exactly at an address, or
//!   [`Error::Occupied`] with what is in the way (never `MAP_FIXED`'s
//!   silent replacement);
//! - [`Reservation`]: address space held as `PROT_NONE` and released on
//!   drop, committed and decommitted piece by piece through borrowed views
//!   ([`Committed`]);
//! - [`find_near`] and [`Reach`]: where a block can go with every byte of
//!   it within reach of an anchor, by bytes or by a machine's branch or
//!   PC-relative instruction ([`reach`] gives the figures);
//! - [`maps()`]: a process's mappings, as `/proc/PID/maps` lists them;
//! - [`probe`]: what the running kernel does with `MAP_FIXED_NOREPLACE`;
//! - [`AddressSpace`]: Linux's mmap rules on an address space held in
//!   memory, for emulators and planners.
//!
//! ```
//! use noclobber::{Prot, Reservation};
//!
//! let space = Reservation::new(1 << 20)?;
//! let mut page = space.commit(0, 4096, Prot::READ | Prot::WRITE)?;
//! page.as_mut_slice().unwrap()[0] = 42;
//! assert_eq!(page.as_slice().unwrap()[0], 42);
//! # Ok::<(), noclobber::Error>(())
//! ```
//!
//! Each call is the C function of the same subject, whose manual page
//! (`man ncb_resv_new`) says every error; `Send` and `Sync` are where the
//! pages' ATTRIBUTES allow them.  `noclobber_sys` is the C API itself.
#![warn(missing_docs)]

mod error;
mod maps;
mod memory;
mod near;
mod space;

pub use error::{Error, Result};
pub use maps::{maps, MapEntry, Maps};
pub use memory::{
    map_at, Committed, Mapping, Prot, Region, Reservation, ReserveOptions,
};
pub use near::{
    find_near, find_near_in, reach, Figures, Kind, Machine, Near, Place, Reach,
    Why,
};
pub use space::{AddressSpace, MapFlags, SpaceOptions};

use noclobber_sys as sys;
use std::ffi::CStr;

/// What the running kernel does with `MAP_FIXED_NOREPLACE`, found by
/// experiment (`ncb_kernel_probe(3)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Noreplace {
    /// Exact: maps at the address or fails with `EEXIST`.
    Honoured,
    /// Taken as a hint: kernels before 4.17, qemu-user, valgrind.
    Ignored,
    /// 4.17 and 4.18: misses a mapping that starts inside the range.
    Partial,
    /// mmap fails when given the flag.
    Rejected,
    /// Behaves like `MAP_FIXED`.
    Replaces,
}

impl Noreplace {
    fn from_raw(v: i32) -> Option<Self> {
        Some(match v {
            sys::NCB_NOREPLACE_HONOURED => Noreplace::Honoured,
            sys::NCB_NOREPLACE_IGNORED => Noreplace::Ignored,
            sys::NCB_NOREPLACE_PARTIAL => Noreplace::Partial,
            sys::NCB_NOREPLACE_REJECTED => Noreplace::Rejected,
            sys::NCB_NOREPLACE_REPLACES => Noreplace::Replaces,
            _ => return None,
        })
    }

    fn raw(self) -> i32 {
        match self {
            Noreplace::Honoured => sys::NCB_NOREPLACE_HONOURED,
            Noreplace::Ignored => sys::NCB_NOREPLACE_IGNORED,
            Noreplace::Partial => sys::NCB_NOREPLACE_PARTIAL,
            Noreplace::Rejected => sys::NCB_NOREPLACE_REJECTED,
            Noreplace::Replaces => sys::NCB_NOREPLACE_REPLACES,
        }
    }

    /// The library's name for it: "honoured", "ignored", ...
    pub fn name(self) -> &'static str {
        // SAFETY: it returns a static string for every value.
        unsafe { static_str(sys::ncb_noreplace_name(self.raw())) }
    }
}

/// The probe's verdict (`ncb_kernel_probe(3)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    /// What the kernel does with `MAP_FIXED_NOREPLACE`.
    pub noreplace: Noreplace,
    /// The `PROCMAP_QUERY` ioctl works (Linux 6.11 and later).
    pub procmap_query: bool,
    /// The page size.
    pub page_size: u64,
    /// `vm.mmap_min_addr`, 0 if unknown.
    pub mmap_min_addr: u64,
}

/// What this kernel does with `MAP_FIXED_NOREPLACE` and the rest the
/// library found out; probed once per process, then remembered.
///
/// ```
/// let p = noclobber::probe()?;
/// println!("MAP_FIXED_NOREPLACE: {}", p.noreplace.name());
/// assert!(p.page_size.is_power_of_two());
/// # Ok::<(), noclobber::Error>(())
/// ```
pub fn probe() -> Result<Probe> {
    let mut p = <sys::ncb_probe as sys::Init>::init();
    // SAFETY: a probe struct with its size set.
    error::check(unsafe { sys::ncb_kernel_probe(&mut p) })?;
    Ok(Probe {
        noreplace: Noreplace::from_raw(p.noreplace)
            .ok_or_else(|| Error::from_errno(libc_einval()))?,
        procmap_query: p.procmap_query == 1,
        page_size: p.page_size as u64,
        mmap_min_addr: p.mmap_min_addr as u64,
    })
}

/// The library's version, as (major, minor, patch).
///
/// ```
/// let (major, minor, _) = noclobber::version();
/// assert!((major, minor) >= (1, 2));
/// ```
pub fn version() -> (u32, u32, u32) {
    // SAFETY: no arguments.
    let v = unsafe { sys::ncb_version() };
    (v >> 16, v >> 8 & 0xff, v & 0xff)
}

const fn libc_einval() -> i32 {
    22
}

/// A string the library keeps for the life of the process.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string that is never freed.
unsafe fn static_str(p: *const std::os::raw::c_char) -> &'static str {
    if p.is_null() {
        return "";
    }
    CStr::from_ptr(p).to_str().unwrap_or("")
}

/// What the borrow checker and the thread markers refuse, as doctests that
/// must not compile.
///
/// A view does not outlive its reservation:
/// ```compile_fail
/// let view = {
///     let r = noclobber::Reservation::new(4096).unwrap();
///     r.commit(0, 4096, noclobber::Prot::READ).unwrap()
/// };
/// ```
/// Nor can the reservation decommit by range while a view is alive:
/// ```compile_fail
/// let mut r = noclobber::Reservation::new(4096).unwrap();
/// let view = r.commit(0, 4096, noclobber::Prot::READ).unwrap();
/// r.decommit(0, 4096).unwrap();
/// drop(view);
/// ```
/// An iterator over the maps is one thread's at a time (not `Sync`):
/// ```compile_fail
/// fn shared<T: Sync>(_: &T) {}
/// shared(&noclobber::maps(0).unwrap());
/// ```
#[doc(hidden)]
pub mod refused {}

#[cfg(test)]
mod tests {
    use super::*;

    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}

    #[test]
    fn thread_markers_as_the_manual_pages_allow() {
        send_sync::<Reservation>();
        send_sync::<Committed<'static>>();
        send_sync::<Mapping>();
        send_sync::<AddressSpace>();
        send_sync::<Error>();
        send::<Maps>();
    }

    #[test]
    fn prot_bits() {
        let rw = Prot::READ | Prot::WRITE;
        assert_eq!(rw.bits(), 3);
        assert!(rw.contains(Prot::READ) && !rw.contains(Prot::EXEC));
        let mut p = Prot::NONE;
        p |= Prot::EXEC;
        assert_eq!(p, Prot::from_bits(4));
        assert_eq!((MapFlags::PRIVATE | MapFlags::ANONYMOUS).bits(), 0x22);
    }

    #[test]
    fn errors_say_what_and_who() {
        let e = Error::from_errno(12);
        assert_eq!(e.errno(), Some(12));
        assert!(std::error::Error::source(&e).is_some());
        let who = MapEntry {
            start: 0x1000,
            end: 0x2000,
            offset: 0,
            inode: 0,
            dev: (0, 0),
            prot: Prot::READ,
            shared: false,
            path: "[heap]".into(),
        };
        let e = Error::Occupied(vec![who.clone(), who]);
        assert_eq!(
            e.to_string(),
            "the range is occupied by 0x1000-0x2000 [heap], \
             0x1000-0x2000 [heap]"
        );
        assert_eq!(
            Error::Occupied(vec![]).to_string(),
            "the range is occupied"
        );
    }

    #[test]
    fn noreplace_round_trips() {
        for n in [
            Noreplace::Honoured,
            Noreplace::Ignored,
            Noreplace::Partial,
            Noreplace::Rejected,
            Noreplace::Replaces,
        ] {
            assert_eq!(Noreplace::from_raw(n.raw()), Some(n));
        }
        assert_eq!(Noreplace::from_raw(0), None);
    }

    #[test]
    fn place_and_reach_raw_values() {
        assert_eq!(Place::default(), Place::Any);
        assert_eq!(Place::Random.raw(), 3);
        assert_eq!(Reach::within(1).kind_raw(), 0);
        assert_eq!(Reach::pcrel().on(Machine::AARCH64).machine_raw(), 183);
        assert!(Reach::within(1).figures().is_err());
    }
}
