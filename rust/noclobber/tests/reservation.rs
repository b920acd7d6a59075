//! Reservation: RAII, commit and decommit through borrowed views, windows
//! and reach.
use noclobber::{maps, Error, Place, Prot, Reach, Reservation, ReserveOptions};

fn mapped(addr: usize) -> Option<noclobber::MapEntry> {
    maps(0).unwrap().find(addr as u64).unwrap()
}

#[test]
fn released_on_drop() {
    let r = Reservation::new(1 << 20).unwrap();
    let at = r.addr();
    assert_eq!(r.len(), 1 << 20);
    assert_eq!(mapped(at).unwrap().prot, Prot::NONE);
    drop(r);
    assert!(mapped(at).is_none());
}

#[test]
fn commits_are_views_of_their_own() {
    let mut r = Reservation::new(4 * 4096).unwrap();
    {
        let mut a = r.commit(0, 4096, Prot::READ | Prot::WRITE).unwrap();
        let b = r.commit(4096, 4096, Prot::READ).unwrap();
        a.as_mut_slice().unwrap()[0] = 1;
        assert_eq!(b.as_slice().unwrap()[0], 0);
        // Overlapping an earlier commit: refused, not replaced.
        assert_eq!(
            r.commit(0, 8192, Prot::READ).unwrap_err().errno(),
            Some(17)
        );
        assert_eq!(a.addr(), r.addr());
        b.decommit().unwrap();
        assert_eq!(mapped(r.addr() + 4096).unwrap().prot, Prot::NONE);
    }
    // No view left: decommit by range.
    r.decommit(0, 4096).unwrap();
    let again = r.commit(0, 4096, Prot::READ).unwrap();
    assert_eq!(again.as_slice().unwrap()[0], 0);
    // Outside the reservation: ERANGE.
    assert_eq!(
        r.commit(4 * 4096, 4096, Prot::READ).unwrap_err().errno(),
        Some(34)
    );
}

#[test]
fn at_an_address_or_occupied() {
    let r = Reservation::new(1 << 16).unwrap();
    match Reservation::at(r.addr(), 4096) {
        Err(Error::Occupied(who)) => assert_eq!(who[0].start, r.addr() as u64),
        other => panic!("{:?}", other),
    }
    let at = r.addr();
    drop(r);
    assert_eq!(Reservation::at(at, 4096).unwrap().addr(), at);
}

#[test]
fn in_a_window_aligned() {
    let probe = Reservation::new(64 << 20).unwrap();
    let w = probe.addr() as u64..probe.addr() as u64 + (64 << 20);
    drop(probe);
    let opts = ReserveOptions {
        window: Some(w.clone()),
        align: 1 << 21,
        place: Place::Highest,
        near: None,
    };
    let r = Reservation::with_options(1 << 21, &opts).unwrap();
    assert_eq!(r.addr() % (1 << 21), 0);
    assert!(w.start <= r.addr() as u64 && r.addr() as u64 + (1 << 21) <= w.end);
    // An empty window, even one ending at 0, is refused, not unlimited.
    for w in [w.end..w.start, w.start..0, 0..0] {
        let opts = ReserveOptions {
            window: Some(w),
            ..Default::default()
        };
        let e = Reservation::with_options(4096, &opts).unwrap_err();
        assert_eq!(e.errno(), Some(22));
    }
}

#[test]
fn near_an_anchor_within_reach() {
    let here = in_a_window_aligned as usize as u64;
    for reach in [Reach::branch(), Reach::within(1 << 30)] {
        let opts = ReserveOptions {
            near: Some((here..here + 64, reach)),
            place: Place::Random,
            ..Default::default()
        };
        match Reservation::with_options(1 << 16, &opts) {
            // A reach by bytes is a window, not an anchor's reach.
            Err(e) if reach.figures().is_err() => {
                assert_eq!(e.errno(), Some(22))
            }
            Ok(r) => {
                let f = reach.figures().unwrap();
                let lo = r.addr() as i64 - here as i64;
                let hi = r.addr() as i64 + r.len() as i64 - here as i64;
                assert!(lo - 64 >= f.min && hi <= f.max + 1, "{} {}", lo, hi);
            }
            Err(e) => panic!("{}", e),
        }
    }
}

#[test]
fn near_an_anchor_within_reach_and_bytes() {
    let here = in_a_window_aligned as usize as u64;
    let bytes = 64 << 20;
    for place in [Place::Lowest, Place::Highest, Place::Random] {
        let opts = ReserveOptions {
            near: Some((here..here + 64, Reach::branch().and_within(bytes))),
            place,
            ..Default::default()
        };
        let r = Reservation::with_options(1 << 16, &opts).unwrap();
        let (lo, hi) = (r.addr() as u64, r.addr() as u64 + r.len() as u64);
        // A static program's text may lie lower than the bytes.
        let least = (here + 64).saturating_sub(bytes);
        assert!(lo >= least && hi <= here + bytes, "{:#x}", lo);
    }
    // Bytes and a window with nothing in common: no room.
    let opts = ReserveOptions {
        window: Some(here + bytes..here + 2 * bytes),
        near: Some((here..here + 64, Reach::branch().and_within(bytes))),
        ..Default::default()
    };
    let e = Reservation::with_options(1 << 16, &opts).unwrap_err();
    assert_eq!(e.errno(), Some(12));
}

#[test]
fn a_reservation_goes_between_threads() {
    let r = std::sync::Arc::new(Reservation::new(8192).unwrap());
    let r2 = r.clone();
    let at = std::thread::spawn(move || {
        let v = r2.commit(4096, 4096, Prot::READ).unwrap();
        v.addr()
    })
    .join()
    .unwrap();
    assert_eq!(at, r.addr() + 4096);
}
