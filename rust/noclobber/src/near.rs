//! Near placement: the reach of each machine's instructions
//! (`ncb_reach(3)`) and where a block fits within it of an anchor
//! (`ncb_find_near(3)`).
use crate::error::{check, Error, Result};
use noclobber_sys as sys;
use std::ops::Range;

/// Which fitting address a placement takes (`enum ncb_place`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Place {
    /// Where the kernel's top-down search would put it.
    #[default]
    Any,
    /// The lowest fitting address.
    Lowest,
    /// The highest fitting address.
    Highest,
    /// Uniform over the fitting addresses.
    Random,
}

impl Place {
    pub(crate) fn raw(self) -> i32 {
        match self {
            Place::Any => sys::NCB_PLACE_ANY,
            Place::Lowest => sys::NCB_PLACE_LOWEST,
            Place::Highest => sys::NCB_PLACE_HIGHEST,
            Place::Random => sys::NCB_PLACE_RANDOM,
        }
    }
}

/// A kind of instruction (`enum ncb_reach_kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The direct call or jump: rel32, B/BL, JAL, BRASL.
    Branch,
    /// The farthest PC-relative address: RIP-relative, ADRP, AUIPC, LARL.
    PcRel,
}

impl Kind {
    fn raw(self) -> i32 {
        match self {
            Kind::Branch => sys::NCB_REACH_BRANCH,
            Kind::PcRel => sys::NCB_REACH_PCREL,
        }
    }
}

/// A machine, by its ELF `e_machine`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Machine(pub u16);

impl Machine {
    /// The machine this library was built for.
    pub const HOST: Machine = Machine(0);
    /// x86-64.
    pub const X86_64: Machine = Machine(62);
    /// i386.
    pub const I386: Machine = Machine(3);
    /// aarch64.
    pub const AARCH64: Machine = Machine(183);
    /// 32-bit Arm (A32).
    pub const ARM: Machine = Machine(40);
    /// 64-bit POWER.
    pub const PPC64: Machine = Machine(21);
    /// RISC-V (64-bit).
    pub const RISCV: Machine = Machine(243);
    /// s390x.
    pub const S390: Machine = Machine(22);
}

/// How far an instruction reaches (`struct ncb_reach`): an instruction
/// at `pc` names every target with `min <= target - base <= max`, a
/// multiple of `step`, where base is `pc` (the next instruction's
/// address where `from_next`), both first taken down to a multiple of
/// `page` where it is not 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Figures {
    /// target - base, at least.
    pub min: i64,
    /// target - base, at most.
    pub max: i64,
    /// 0, or 4096 for ADRP.
    pub page: u64,
    /// target - base is a multiple of it.
    pub step: u32,
    /// base is the next instruction's address (x86).
    pub from_next: bool,
    /// The instruction: "b/bl", "adrp", "call/jmp rel32", ...
    pub name: &'static str,
}

/// The figures of `kind` on `machine` (`ncb_reach(3)`).
///
/// ```
/// use noclobber::{reach, Kind, Machine};
///
/// let b = reach(Machine::AARCH64, Kind::Branch)?;
/// assert_eq!((b.min, b.max, b.name), (-(128 << 20), (128 << 20) - 4, "b/bl"));
/// assert_eq!(reach(Machine::AARCH64, Kind::PcRel)?.page, 4096);
/// // i386 has no PC-relative data addressing.
/// assert_eq!(reach(Machine::I386, Kind::PcRel).unwrap_err().errno(), Some(2));
/// # Ok::<(), noclobber::Error>(())
/// ```
pub fn reach(machine: Machine, kind: Kind) -> Result<Figures> {
    let mut r = <sys::ncb_reach as sys::Init>::init();
    // SAFETY: a struct with its size set.
    check(unsafe { sys::ncb_reach(machine.0 as i32, kind.raw(), &mut r) })?;
    Ok(Figures {
        min: r.min,
        max: r.max,
        page: r.page,
        step: r.step,
        from_next: r.from_next != 0,
        // SAFETY: the library's table, static.
        name: unsafe { crate::static_str(r.name) },
    })
}

/// How near: less than a number of bytes from every byte of the anchor,
/// within an instruction's reach of it both ways, or both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reach {
    within: u64,
    kind: Option<Kind>,
    machine: Machine,
}

impl Reach {
    /// Every byte less than `bytes` from every byte of the anchor.
    pub fn within(bytes: u64) -> Reach {
        Reach {
            within: bytes,
            kind: None,
            machine: Machine::HOST,
        }
    }

    /// Within this machine's direct branch's reach, both ways.
    pub fn branch() -> Reach {
        Reach {
            within: 0,
            kind: Some(Kind::Branch),
            machine: Machine::HOST,
        }
    }

    /// Within this machine's farthest PC-relative address's reach.
    pub fn pcrel() -> Reach {
        Reach {
            within: 0,
            kind: Some(Kind::PcRel),
            machine: Machine::HOST,
        }
    }

    /// The instruction of another machine (an emulator's guest).
    pub fn on(self, machine: Machine) -> Reach {
        Reach { machine, ..self }
    }

    /// Less than `bytes` as well.
    pub fn and_within(self, bytes: u64) -> Reach {
        Reach {
            within: bytes,
            ..self
        }
    }

    /// The instruction's figures, if it is one.
    pub fn figures(&self) -> Result<Figures> {
        match self.kind {
            Some(k) => reach(self.machine, k),
            None => Err(Error::from_errno(22)),
        }
    }

    pub(crate) fn kind_raw(&self) -> i32 {
        self.kind.map_or(0, Kind::raw)
    }

    pub(crate) fn within_bytes(&self) -> u64 {
        self.within
    }

    pub(crate) fn machine_raw(&self) -> i32 {
        self.machine.0 as i32
    }
}

/// Why nothing fits (`enum ncb_near_why`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Why {
    /// It fits: [`Near::addr`] says where.
    Placed,
    /// No page of the window is in the user address space.
    Outside,
    /// The window is shorter than the block.
    Small,
    /// No free gap of the window is as long.
    Full,
    /// Gaps are long enough, but none at the alignment.
    Align,
}

impl Why {
    fn from_raw(v: i32) -> Why {
        match v {
            sys::NCB_NEAR_OUTSIDE => Why::Outside,
            sys::NCB_NEAR_SMALL => Why::Small,
            sys::NCB_NEAR_FULL => Why::Full,
            sys::NCB_NEAR_ALIGN => Why::Align,
            _ => Why::Placed,
        }
    }
}

/// Where a block fits near an anchor, and what the window holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Near {
    /// Where the block goes; `None` when nothing fits.
    pub addr: Option<u64>,
    /// Why nothing fits, or [`Why::Placed`].
    pub why: Why,
    /// The window, clamped to the user address space, whole pages.
    pub window: Range<u64>,
    /// Free bytes in the window.
    pub free: u64,
    /// Free gaps in the window.
    pub ngaps: u64,
    /// Mappings overlapping the window.
    pub nmaps: u64,
    /// Its largest gaps (at most eight), the largest first.
    pub gaps: Vec<Range<u64>>,
}

/// Where `len` bytes can go in this process with every byte of them
/// within `reach` of every byte of `anchor`, and what the window holds
/// (`ncb_find_near(3)`).  A snapshot: take the place with
/// [`Reservation::with_options`](crate::Reservation::with_options).
///
/// ```
/// use noclobber::{find_near, Reach};
///
/// let here = find_near as usize as u64;
/// let n = find_near(here..here + 1, Reach::branch(), 1 << 20)?;
/// let at = n.addr.unwrap();
/// assert!(n.window.start <= at && at < n.window.end);
/// // Too long for the reach: said, not an error.
/// let far = find_near(here..here + 1, Reach::within(1 << 20), 4 << 20)?;
/// assert_eq!((far.addr, far.why), (None, noclobber::Why::Small));
/// # Ok::<(), noclobber::Error>(())
/// ```
pub fn find_near(anchor: Range<u64>, reach: Reach, len: usize) -> Result<Near> {
    find_near_in(0, anchor, reach, len, 0, Place::Any)
}

/// [`find_near`] in process `pid` (0: this one), aligned to `align` (0: a
/// page), placed as `place` says.
pub fn find_near_in(
    pid: i32,
    anchor: Range<u64>,
    reach: Reach,
    len: usize,
    align: usize,
    place: Place,
) -> Result<Near> {
    let mut o = <sys::ncb_near_opts as sys::Init>::init();
    o.align = align;
    o.place = place.raw();
    o.reach = reach.kind_raw();
    o.machine = reach.machine_raw();
    let mut n = <sys::ncb_near as sys::Init>::init();
    // SAFETY: structs with their sizes set.
    let ret = unsafe {
        sys::ncb_find_near(
            pid,
            anchor.start,
            anchor.end,
            reach.within,
            len,
            &o,
            &mut n,
        )
    };
    // No room is an answer, with its reason.
    if ret != -12 || n.why == sys::NCB_NEAR_PLACED {
        check(ret)?;
    }
    let listed = (n.nlisted as usize).min(sys::NCB_NEAR_GAPS);
    Ok(Near {
        addr: (n.why == sys::NCB_NEAR_PLACED).then(|| n.addr),
        why: Why::from_raw(n.why),
        window: n.lo..n.hi,
        free: n.free,
        ngaps: n.ngaps,
        nmaps: n.nmaps,
        gaps: n.gaps[..listed].iter().map(|g| g.start..g.end).collect(),
    })
}
