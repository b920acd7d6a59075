//! AddressSpace: the model's calls, against what the kernel's rules say.
use noclobber::{AddressSpace, MapFlags, Place, Prot, SpaceOptions};

const ANON: MapFlags = MapFlags::from_bits(0x22);

#[test]
fn places_top_down_and_refuses_what_the_kernel_refuses() {
    let opts = SpaceOptions {
        page_size: 4096,
        mmap_min_addr: 65536,
        task_size: 1 << 47,
        thp: -1,
        ..Default::default()
    };
    let mut s = AddressSpace::with_options(&opts).unwrap();
    let a = s.mmap(0, 8192, Prot::READ, ANON).unwrap();
    let b = s.mmap(0, 8192, Prot::READ, ANON).unwrap();
    assert_eq!(a - b, 8192, "top-down, next to each other");
    assert_eq!(s.count(), 1, "merged");
    let e = s
        .mmap(a, 4096, Prot::READ, ANON | MapFlags::FIXED_NOREPLACE)
        .unwrap_err();
    assert_eq!(e.errno(), Some(17));
    // Below mmap_min_addr, and unaligned.
    assert!(s
        .mmap(4096, 4096, Prot::READ, ANON | MapFlags::FIXED)
        .is_err());
    assert_eq!(s.munmap(a + 1, 4096).unwrap_err().errno(), Some(22));
    s.munmap(a, 4096).unwrap();
    // The first area ending above it, as the kernel's find_vma.
    assert_eq!(s.find(a).unwrap().unwrap().start, a + 4096);
    assert_eq!(s.find(b).unwrap().unwrap().end, a);
    let free = s
        .find_free(65536, 1 << 40, 4096, 4096, Place::Lowest)
        .unwrap();
    assert_eq!(free, 65536);
}

#[test]
fn loads_maps_text_and_dumps_it_back() {
    let text = "10000-12000 r-xp 00000000 08:01 42 /bin/prog\n\
                7ffc0000-7ffe0000 rw-p 00000000 00:00 0 [stack]\n";
    let mut s = AddressSpace::new().unwrap();
    s.load(text).unwrap();
    assert_eq!(s.count(), 2);
    let dump = s.dump();
    assert!(
        dump.starts_with("00010000-00012000 r-xp 00000000 08:01 42 "),
        "{}",
        dump
    );
    assert!(
        dump.lines().nth(1).unwrap().ends_with(" [stack]"),
        "{}",
        dump
    );
    let mut again = AddressSpace::new().unwrap();
    again.load(&dump).unwrap();
    assert_eq!(again.dump(), dump);
    assert!(s.load("not maps\n").is_err());
    let f = s.file("/bin/prog", (8, 1), 42).unwrap();
    assert_ne!(f, 0);
    let at = s
        .mmap_file(
            0x20000,
            4096,
            Prot::READ,
            MapFlags::PRIVATE | MapFlags::FIXED,
            f,
            0,
        )
        .unwrap();
    assert_eq!(s.find(at).unwrap().unwrap().inode, 42);
}

#[test]
fn brk_and_mremap() {
    let opts = SpaceOptions {
        start_brk: 0x100000,
        brk: 0x100000,
        ..Default::default()
    };
    let mut s = AddressSpace::with_options(&opts).unwrap();
    assert_eq!(s.brk(0x102000).unwrap(), 0x102000);
    let a = s
        .mmap(0x40000000, 4096, Prot::READ, ANON | MapFlags::FIXED)
        .unwrap();
    let moved = s.mremap(a, 4096, 8192, 1, 0).unwrap();
    assert_eq!(s.find(moved).unwrap().unwrap().end - moved, 8192);
}
