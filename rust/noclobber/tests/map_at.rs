//! map_at: exact placement, the occupants of a taken range, and errors.
use noclobber::{map_at, Error, Prot, Reservation};

/// A free range of len bytes, as the kernel would choose it.
fn free_range(len: usize) -> usize {
    let r = Reservation::new(len).unwrap();
    r.addr()
}

#[test]
fn maps_exactly_there_and_unmaps_on_drop() {
    let at = free_range(1 << 16);
    let mut m = map_at(at, 5000, Prot::READ | Prot::WRITE).unwrap();
    assert_eq!(m.addr(), at);
    assert_eq!(m.len() % 4096, 0);
    assert!(m.len() >= 5000);
    m.as_mut_slice().unwrap()[4999] = 7;
    assert_eq!(m.as_slice().unwrap()[4999], 7);
    drop(m);
    // Free again: it can be mapped once more.
    assert!(map_at(at, 4096, Prot::READ).is_ok());
}

#[test]
fn a_taken_range_names_its_occupant_and_changes_nothing() {
    let at = free_range(1 << 16);
    let mut first = map_at(at + 4096, 4096, Prot::READ | Prot::WRITE).unwrap();
    first.as_mut_slice().unwrap()[0] = 9;
    match map_at(at, 3 * 4096, Prot::READ) {
        Err(Error::Occupied(who)) => {
            assert_eq!(who.len(), 1, "{:?}", who);
            assert_eq!(who[0].start, (at + 4096) as u64);
            assert_eq!(who[0].prot, Prot::READ | Prot::WRITE);
        }
        other => panic!("{:?}", other),
    }
    assert_eq!(first.as_slice().unwrap()[0], 9);
    let e = map_at(at, 3 * 4096, Prot::READ).unwrap_err();
    assert_eq!(e.errno(), Some(17));
    assert!(e.to_string().contains("occupied"), "{}", e);
    assert_eq!(
        std::io::Error::from(e).kind(),
        std::io::ErrorKind::AlreadyExists
    );
}

#[test]
fn views_follow_the_protection() {
    let at = free_range(1 << 16);
    let mut m = map_at(at, 4096, Prot::READ).unwrap();
    assert!(m.as_slice().is_some());
    assert!(m.as_mut_slice().is_none());
    m.protect(Prot::NONE).unwrap();
    assert!(m.as_slice().is_none());
    assert_eq!(m.prot(), Prot::NONE);
}

#[test]
fn bad_arguments_are_errors() {
    // Not page-aligned, and no length.
    let at = free_range(1 << 16);
    assert_eq!(
        map_at(at + 1, 4096, Prot::READ).unwrap_err().errno(),
        Some(22)
    );
    assert_eq!(map_at(at, 0, Prot::READ).unwrap_err().errno(), Some(22));
}
