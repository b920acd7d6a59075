//! maps: this process's mappings, in order, and another's errors.
use noclobber::{map_at, maps, Prot, Reservation};

#[test]
fn lists_in_order_with_a_mapping_of_ours() {
    let r = Reservation::new(1 << 16).unwrap();
    let at = r.addr();
    drop(r);
    let _m = map_at(at, 4096, Prot::READ).unwrap();
    let all: Vec<_> = maps(0).unwrap().collect::<Result<_, _>>().unwrap();
    assert!(all.windows(2).all(|w| w[0].end <= w[1].start));
    let ours = all.iter().find(|m| m.start == at as u64).unwrap();
    assert_eq!((ours.prot, ours.shared, ours.inode), (Prot::READ, false, 0));
    assert!(all.iter().any(|m| m.path == "[stack]"));
}

#[test]
fn seek_and_find() {
    let mut it = maps(0).unwrap();
    let first = it.next().unwrap().unwrap();
    it.seek(first.end).unwrap();
    let second = it.next().unwrap().unwrap();
    assert!(second.start >= first.end);
    assert_eq!(it.find(first.start).unwrap().unwrap(), first);
    assert!(it.find(0).unwrap().is_none());
}

#[test]
fn another_process_or_none() {
    let me = std::process::id() as i32;
    assert!(maps(me).unwrap().count() > 3);
    assert_eq!(maps(i32::MAX).err().unwrap().errno(), Some(2));
    assert_eq!(maps(-1).err().unwrap().errno(), Some(22));
}
