//! reach and find_near: the figures, the window and the errors.
use noclobber::{
    find_near, find_near_in, reach, Kind, Machine, Place, Reach, Why,
};

#[test]
fn every_machine_has_a_branch() {
    for m in [
        Machine::X86_64,
        Machine::I386,
        Machine::AARCH64,
        Machine::ARM,
        Machine::PPC64,
        Machine::RISCV,
        Machine::S390,
        Machine::HOST,
    ] {
        let f = reach(m, Kind::Branch).unwrap();
        assert!(
            f.min < 0 && f.max > 0 && f.step.is_power_of_two(),
            "{:?}",
            f
        );
    }
    assert_eq!(
        reach(Machine(2), Kind::Branch).unwrap_err().errno(),
        Some(95)
    );
    assert_eq!(
        reach(Machine::PPC64, Kind::PcRel).unwrap_err().errno(),
        Some(2)
    );
}

#[test]
fn the_window_is_the_reach() {
    let here = the_window_is_the_reach as usize as u64;
    let n =
        find_near(here..here + 1, Reach::branch().on(Machine::AARCH64), 4096)
            .unwrap();
    assert!(here - n.window.start <= 128 << 20);
    assert!(n.window.end - here <= 128 << 20);
    // Cut below where the space starts (a static program's code lies
    // low), not above.
    assert!(n.window.end - here >= (128 << 20) - 65536);
    let both = find_near(
        here..here + 1,
        Reach::branch().on(Machine::AARCH64).and_within(1 << 20),
        4096,
    )
    .unwrap();
    assert!(both.window.end - both.window.start <= 2 << 20);
    assert_eq!(both.why, Why::Placed);
    assert!(both.gaps.len() <= 8 && both.free >= 4096 && both.ngaps >= 1);
}

#[test]
fn no_room_is_an_answer_and_bad_input_an_error() {
    let here = 1u64 << 30;
    let n = find_near(here..here, Reach::within(1 << 16), 1 << 20).unwrap();
    assert_eq!((n.addr, n.why), (None, Why::Small));
    let e = find_near(here..here - 1, Reach::branch(), 4096).unwrap_err();
    assert_eq!(e.errno(), Some(22));
    assert_eq!(
        find_near(here..here, Reach::within(0), 4096)
            .unwrap_err()
            .errno(),
        Some(22)
    );
    let e = find_near(here..here, Reach::pcrel().on(Machine::I386), 4096)
        .unwrap_err();
    assert_eq!(e.errno(), Some(2));
    let e = find_near_in(-1, here..here, Reach::branch(), 4096, 0, Place::Any)
        .unwrap_err();
    assert_eq!(e.errno(), Some(22));
    let e =
        find_near_in(0, here..here, Reach::branch(), 4096, 3 << 12, Place::Any)
            .unwrap_err();
    assert_eq!(e.errno(), Some(22));
}
