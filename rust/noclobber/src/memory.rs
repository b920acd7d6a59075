//! Memory of our own at an address: a no-clobber mapping ([`map_at`]),
//! and reservations committed piece by piece ([`Reservation`]).
use crate::error::{check, Error, Result, EEXIST};
use crate::maps::occupants;
use crate::near::{Place, Reach};
use noclobber_sys as sys;
use std::ops::{BitOr, BitOrAssign, Range};
use std::os::raw::{c_int, c_void};
use std::ptr::NonNull;

extern "C" {
    fn munmap(addr: *mut c_void, len: usize) -> c_int;
    fn mprotect(addr: *mut c_void, len: usize, prot: c_int) -> c_int;
}

fn last_errno() -> Error {
    Error::Os(std::io::Error::last_os_error())
}

/// Memory protection: `PROT_READ`, `PROT_WRITE`, `PROT_EXEC`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Prot(i32);

impl Prot {
    /// No access.
    pub const NONE: Prot = Prot(sys::PROT_NONE);
    /// Readable.
    pub const READ: Prot = Prot(sys::PROT_READ);
    /// Writable.
    pub const WRITE: Prot = Prot(sys::PROT_WRITE);
    /// Executable.
    pub const EXEC: Prot = Prot(sys::PROT_EXEC);

    /// The `PROT_*` bits.
    pub const fn bits(self) -> i32 {
        self.0
    }

    /// From `PROT_*` bits.
    pub const fn from_bits(bits: i32) -> Prot {
        Prot(bits)
    }

    /// Has every bit of `other`.
    pub const fn contains(self, other: Prot) -> bool {
        self.0 & other.0 == other.0
    }
}

impl BitOr for Prot {
    type Output = Prot;
    fn bitor(self, o: Prot) -> Prot {
        Prot(self.0 | o.0)
    }
}

impl BitOrAssign for Prot {
    fn bitor_assign(&mut self, o: Prot) {
        self.0 |= o.0;
    }
}

/// Anonymous private memory at exactly `addr`, `len` bytes (rounded up to
/// pages), mapped without replacing anything (`ncb_mmap(3)` with
/// `MAP_FIXED_NOREPLACE`, made exact on every kernel): unmapped on drop.
///
/// Where some page of the range is mapped already, the error is
/// [`Error::Occupied`] with what is there, and nothing changed.
///
/// ```
/// use noclobber::{map_at, Error, Prot};
///
/// // A free address: what the kernel would choose, left free again.
/// let probe = noclobber::Reservation::new(1 << 16)?;
/// let addr = probe.addr();
/// // Taken: the reservation is in the way, and is named.
/// match map_at(addr, 4096, Prot::READ) {
///     Err(Error::Occupied(who)) => assert_eq!(who[0].start, addr as u64),
///     other => panic!("{:?}", other),
/// }
/// drop(probe);
/// let mut m = map_at(addr, 4096, Prot::READ | Prot::WRITE)?;
/// assert_eq!(m.addr(), addr);
/// m.as_mut_slice().unwrap()[4095] = 1;
/// # Ok::<(), noclobber::Error>(())
/// ```
pub fn map_at(addr: usize, len: usize, prot: Prot) -> Result<Mapping> {
    let flags =
        sys::MAP_PRIVATE | sys::MAP_ANONYMOUS | sys::NCB_MAP_FIXED_NOREPLACE;
    // SAFETY: a no-clobber placement replaces nothing of anyone's.
    let p = unsafe {
        sys::ncb_mmap(addr as *mut c_void, len, prot.0, flags, -1, 0)
    };
    if p == sys::MAP_FAILED {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(EEXIST) {
            return Err(Error::Occupied(occupants(0, addr, len)?));
        }
        return Err(Error::Os(e));
    }
    Ok(Mapping(Region {
        addr: p as usize,
        len: round_to_pages(len),
        prot,
    }))
}

fn page_size() -> usize {
    crate::probe().map_or(4096, |p| p.page_size as usize)
}

fn round_to_pages(len: usize) -> usize {
    let pg = page_size();
    (len + pg - 1) & !(pg - 1)
}

/// Memory of our own, mapped: what a [`Mapping`] and a [`Committed`]
/// view show through `Deref` (not `DerefMut`: the memory stays theirs).
#[derive(Debug)]
pub struct Region {
    addr: usize,
    len: usize,
    prot: Prot,
}

impl Region {
    /// Its first byte's address.
    pub fn addr(&self) -> usize {
        self.addr
    }

    /// Its length, whole pages.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Never: memory is at least a page.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Its protection.
    pub fn prot(&self) -> Prot {
        self.prot
    }

    /// A raw pointer to it: reading, writing or running it is the
    /// caller's `unsafe` business, within its protection and while its
    /// owner lives.
    pub fn as_ptr(&self) -> *mut u8 {
        self.addr as *mut u8
    }

    /// Its bytes, where it is readable.
    pub fn as_slice(&self) -> Option<&[u8]> {
        // SAFETY: mapped, readable, its owner's alone, for as long as the
        // owner (whose borrow this is) lives.
        self.prot.contains(Prot::READ).then(|| unsafe {
            std::slice::from_raw_parts(self.addr as *const u8, self.len)
        })
    }

    /// Its bytes, where it is readable and writable.
    fn as_mut_slice(&mut self) -> Option<&mut [u8]> {
        // SAFETY: as as_slice, borrowed mutably through its owner.
        self.prot
            .contains(Prot::READ | Prot::WRITE)
            .then(|| unsafe {
                std::slice::from_raw_parts_mut(self.addr as *mut u8, self.len)
            })
    }

    /// Change its protection (`mprotect(2)`).
    fn protect(&mut self, prot: Prot) -> Result<()> {
        // SAFETY: a range that is its owner's alone.
        let ret =
            unsafe { mprotect(self.addr as *mut c_void, self.len, prot.0) };
        if ret != 0 {
            return Err(last_errno());
        }
        self.prot = prot;
        Ok(())
    }
}

/// Memory that [`map_at`] mapped, unmapped on drop.  It is only memory:
/// `Send` and `Sync`.  Its address, length and bytes are its
/// [`Region`]'s.
#[derive(Debug)]
pub struct Mapping(Region);

impl std::ops::Deref for Mapping {
    type Target = Region;
    fn deref(&self) -> &Region {
        &self.0
    }
}

impl Mapping {
    /// Its bytes, where it is readable and writable.
    pub fn as_mut_slice(&mut self) -> Option<&mut [u8]> {
        self.0.as_mut_slice()
    }

    /// Change its protection (`mprotect(2)`).
    pub fn protect(&mut self, prot: Prot) -> Result<()> {
        self.0.protect(prot)
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: ours to unmap, once.
        unsafe { munmap(self.0.addr as *mut c_void, self.0.len) };
    }
}

/// Where [`Reservation::with_options`] puts a reservation.
#[derive(Clone, Debug, Default)]
pub struct ReserveOptions {
    /// Inside this window, if any.
    pub window: Option<Range<u64>>,
    /// A power of two, at least a page; 0: a page.
    pub align: usize,
    /// Which fitting address, in a window or near an anchor.
    pub place: Place,
    /// Within reach of this anchor, both ways, for this kind of
    /// instruction ([`Reach::branch`], [`Reach::pcrel`]), and less than
    /// [`Reach::and_within`]'s bytes from it where that is given too (a
    /// reach by bytes alone is a window, which `window` says).
    pub near: Option<(Range<u64>, Reach)>,
}

/// Address space held as one `PROT_NONE`, `MAP_NORESERVE` mapping that
/// costs no memory, taken without replacing anything
/// (`ncb_resv_new(3)`), and released on drop.  Inside it, [`commit`]
/// maps memory and hands out a view of it.
///
/// A reservation takes its own lock: `Send` and `Sync` (`ncb_resv_new(3)`
/// ATTRIBUTES); it is released only when no view borrows it.
///
/// [`commit`]: Reservation::commit
#[derive(Debug)]
pub struct Reservation {
    raw: NonNull<sys::ncb_resv>,
}

// SAFETY: the C side locks each reservation; release needs ownership.
unsafe impl Send for Reservation {}
unsafe impl Sync for Reservation {}

impl Reservation {
    /// `len` bytes wherever the kernel puts them.
    pub fn new(len: usize) -> Result<Reservation> {
        Self::make(None, len, &ReserveOptions::default())
    }

    /// `len` bytes at exactly `addr`, or [`Error::Occupied`] with what is
    /// there.
    pub fn at(addr: usize, len: usize) -> Result<Reservation> {
        match Self::make(Some(addr), len, &ReserveOptions::default()) {
            Err(e) if e.errno() == Some(EEXIST) => {
                Err(Error::Occupied(occupants(0, addr, len)?))
            }
            r => r,
        }
    }

    /// `len` bytes in a window, aligned, near an anchor: as `opts` says.
    ///
    /// ```
    /// use noclobber::{Reach, Reservation, ReserveOptions};
    ///
    /// // Code within this machine's direct-call reach of this function.
    /// let here = Reservation::with_options as usize as u64;
    /// let opts = ReserveOptions {
    ///     near: Some((here..here + 1, Reach::branch())),
    ///     ..Default::default()
    /// };
    /// let code = Reservation::with_options(1 << 20, &opts)?;
    /// let fig = Reach::branch().figures()?;
    /// let far = code.addr() as i64 + code.len() as i64 - here as i64;
    /// let near = code.addr() as i64 - here as i64;
    /// assert!(far <= fig.max + 1 && near >= fig.min);
    /// # Ok::<(), noclobber::Error>(())
    /// ```
    pub fn with_options(
        len: usize,
        opts: &ReserveOptions,
    ) -> Result<Reservation> {
        Self::make(None, len, opts)
    }

    fn make(
        addr: Option<usize>,
        len: usize,
        o: &ReserveOptions,
    ) -> Result<Reservation> {
        let mut opts = <sys::ncb_resv_opts as sys::Init>::init();
        if let Some(w) = &o.window {
            // An end of 0 is no limit to the C side: an empty window is
            // a mistake, whatever its ends.
            if w.end <= w.start {
                return Err(Error::from_errno(22));
            }
            opts.lo = w.start;
            opts.hi = w.end;
        }
        opts.align = o.align;
        opts.place = o.place.raw();
        if let Some((anchor, reach)) = &o.near {
            opts.near_lo = anchor.start;
            opts.near_hi = anchor.end;
            opts.reach = reach.kind_raw();
            opts.machine = reach.machine_raw();
            if opts.reach == 0 {
                return Err(Error::from_errno(22));
            }
            within(&mut opts, anchor, reach.within_bytes())?;
        }
        let mut raw = std::ptr::null_mut();
        let at = addr.unwrap_or(0) as *mut c_void;
        // SAFETY: options with their size set, an out pointer.
        check(unsafe { sys::ncb_resv_new(&mut raw, at, len, &opts) })?;
        Ok(Reservation {
            raw: NonNull::new(raw).expect("ncb_resv_new gave no handle"),
        })
    }

    /// Its first byte's address.
    pub fn addr(&self) -> usize {
        // SAFETY: our handle.
        unsafe { sys::ncb_resv_addr(self.raw.as_ptr()) as usize }
    }

    /// Its length, whole pages.
    pub fn len(&self) -> usize {
        // SAFETY: our handle.
        unsafe { sys::ncb_resv_len(self.raw.as_ptr()) }
    }

    /// Never: a reservation has at least one page.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Anonymous private memory at `offset` (whole pages) for `len`
    /// bytes, mapped with `MAP_FIXED` inside the reservation, which is
    /// ours: a view that borrows the reservation.  A range that overlaps
    /// one committed before fails (`EEXIST`) rather than replace it, so
    /// every view's bytes are its own.
    pub fn commit(
        &self,
        offset: usize,
        len: usize,
        prot: Prot,
    ) -> Result<Committed<'_>> {
        let addr = self
            .addr()
            .checked_add(offset)
            .ok_or_else(|| Error::from_errno(22))?;
        let flags = sys::MAP_PRIVATE | sys::MAP_ANONYMOUS;
        // SAFETY: our handle; the C side checks the range is ours.
        check(unsafe {
            sys::ncb_resv_commit(
                self.raw.as_ptr(),
                addr as *mut c_void,
                len,
                prot.0,
                flags,
                -1,
                0,
            )
        })?;
        Ok(Committed {
            resv: self,
            region: Region {
                addr,
                len: round_to_pages(len),
                prot,
            },
        })
    }

    /// Give `[offset, offset + len)` back to the reservation, committed
    /// or not: possible only when no view borrows it.
    pub fn decommit(&mut self, offset: usize, len: usize) -> Result<()> {
        let addr = self
            .addr()
            .checked_add(offset)
            .ok_or_else(|| Error::from_errno(22))?;
        self.decommit_at(addr, len)
    }

    fn decommit_at(&self, addr: usize, len: usize) -> Result<()> {
        // SAFETY: our handle; no view of the range is left (the callers
        // hold it mutably, or consume the view).
        check(unsafe {
            sys::ncb_resv_decommit(self.raw.as_ptr(), addr as *mut c_void, len)
        })?;
        Ok(())
    }
}

// The C options have no bytes of reach: the window narrowed to where
// every byte is less than them from every byte of the anchor, as
// ncb_find_near(3) has it, [end - within, start + within).  Nothing in
// common with the window given is no room, as for the reach.
fn within(
    o: &mut sys::ncb_resv_opts,
    anchor: &Range<u64>,
    bytes: u64,
) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    let end = anchor.end.max(anchor.start.saturating_add(1));
    let hi = anchor
        .start
        .checked_add(bytes)
        .ok_or_else(|| Error::from_errno(22))?;
    o.lo = o.lo.max(end.saturating_sub(bytes));
    o.hi = if o.hi == 0 { hi } else { o.hi.min(hi) };
    if o.hi <= o.lo {
        return Err(Error::from_errno(12));
    }
    Ok(())
}

impl Drop for Reservation {
    fn drop(&mut self) {
        // SAFETY: ours, released once; no view outlives self.
        unsafe { sys::ncb_resv_release(self.raw.as_ptr()) };
    }
}

/// Committed memory inside a [`Reservation`], which it borrows: its bytes
/// are this view's alone, its address, length and bytes its [`Region`]'s.
/// Dropping the view leaves the memory committed until
/// [`Reservation::decommit`] or the reservation's release.
#[derive(Debug)]
pub struct Committed<'a> {
    resv: &'a Reservation,
    region: Region,
}

impl std::ops::Deref for Committed<'_> {
    type Target = Region;
    fn deref(&self) -> &Region {
        &self.region
    }
}

impl Committed<'_> {
    /// Its bytes, where it is readable and writable.
    pub fn as_mut_slice(&mut self) -> Option<&mut [u8]> {
        self.region.as_mut_slice()
    }

    /// Change its protection (`mprotect(2)`): writable while code is
    /// written, then executable.
    pub fn protect(&mut self, prot: Prot) -> Result<()> {
        self.region.protect(prot)
    }

    /// Give it back to the reservation (`ncb_resv_decommit(3)`): reserved
    /// again, and free for another commit.
    ///
    /// ```
    /// use noclobber::{Prot, Reservation};
    ///
    /// let r = Reservation::new(8192)?;
    /// let page = r.commit(0, 4096, Prot::READ)?;
    /// assert!(r.commit(0, 4096, Prot::READ).is_err());   // its own
    /// page.decommit()?;
    /// let again = r.commit(0, 4096, Prot::READ)?;
    /// assert_eq!(again.as_slice().unwrap()[0], 0);
    /// # Ok::<(), noclobber::Error>(())
    /// ```
    pub fn decommit(self) -> Result<()> {
        self.resv.decommit_at(self.region.addr, self.region.len)
    }
}
