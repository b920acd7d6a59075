//! probe and version: the kernel's verdict, the library's version.
use noclobber::{probe, version, Noreplace};

#[test]
fn the_probe_answers_and_names_its_verdict() {
    let p = probe().unwrap();
    assert!(p.page_size.is_power_of_two() && p.page_size >= 4096);
    assert!(!p.noreplace.name().is_empty());
    assert_eq!(probe().unwrap(), p);
    assert_eq!(Noreplace::Honoured.name(), "honoured");
}

#[test]
fn the_version_is_the_crates() {
    let v = version();
    let want: Vec<u32> = env!("CARGO_PKG_VERSION")
        .split('.')
        .map(|s| s.parse().unwrap())
        .collect();
    assert_eq!(vec![v.0, v.1, v.2], want);
}
