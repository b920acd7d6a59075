//! The hand-written mirror against include/noclobber.h, by a C compiler:
//! each struct's size and fields, each constant, each function's
//! prototype (its parameter and return types, as the compiler sees them
//! compatible), the size and sign of pid_t and off_t, which prototypes
//! name as C does, and every function and constant of the header
//! declared here.  The
//! compiler is $CC, else cc; without one, or outside the source tree, the
//! tests say so and pass.
use noclobber_sys as sys;
use std::fmt::Write;
use std::mem::size_of;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

fn include_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../include");
    if dir.join("noclobber.h").is_file() {
        Some(dir)
    } else {
        eprintln!("SKIP: not in the source tree: no include/noclobber.h");
        None
    }
}

/// A Rust type as written in the mirror, as C spells it.
fn c_type(rust: &str) -> String {
    let t = rust.trim();
    if let Some(rest) = t.strip_prefix("*mut ") {
        return format!("{} *", c_type(rest));
    }
    if let Some(rest) = t.strip_prefix("*const ") {
        return format!("{} const *", c_type(rest));
    }
    match t {
        "()" => "void".into(),
        "c_void" => "void".into(),
        "c_char" => "char".into(),
        "c_int" => "int".into(),
        "c_uint" => "unsigned int".into(),
        "c_long" => "long".into(),
        "usize" => "size_t".into(),
        "u32" => "uint32_t".into(),
        "u64" => "uint64_t".into(),
        "i64" => "int64_t".into(),
        "pid_t" | "off_t" | "ncb_mapping_fn" => t.into(),
        s if s.starts_with("ncb_") => format!("struct {}", s),
        s => panic!("no C spelling for {}", s),
    }
}

/// The C field name of a Rust one: `type_` is `type`.
fn c_field(name: &str) -> &str {
    name.strip_suffix('_').unwrap_or(name)
}

fn asserts(off_by_one: Option<&str>) -> String {
    let mut c = String::from("#include <stddef.h>\n#include <noclobber.h>\n");
    for (name, size, fields) in sys::struct_layouts() {
        writeln!(
            c,
            "_Static_assert(sizeof(struct {n}) == {s}, \"sizeof {n}\");",
            n = name,
            s = size
        )
        .unwrap();
        for (f, off, fsize) in fields {
            let f = c_field(f);
            let key = format!("{}.{}", name, f);
            let off = if off_by_one == Some(key.as_str()) {
                off + 1
            } else {
                off
            };
            writeln!(
                c,
                "_Static_assert(offsetof(struct {n}, {f}) == {o} && \
                 sizeof(((struct {n} *)0)->{f}) == {s}, \"{n}.{f}\");",
                n = name,
                f = f,
                o = off,
                s = fsize
            )
            .unwrap();
        }
    }
    // The types the prototypes name as C does: their size and sign here.
    for (name, size, signed) in [
        ("pid_t", size_of::<sys::pid_t>(), sys::pid_t::MIN != 0),
        ("off_t", size_of::<sys::off_t>(), sys::off_t::MIN != 0),
    ] {
        let size = if off_by_one == Some(name) {
            size + 1
        } else {
            size
        };
        writeln!(
            c,
            "_Static_assert(sizeof({n}) == {s} && (({n})-1 < 0) == {g}, \
             \"{n}\");",
            n = name,
            s = size,
            g = signed as i32
        )
        .unwrap();
    }
    for (name, value) in sys::CONSTANTS {
        writeln!(
            c,
            "_Static_assert((long long)({n}) == {v}LL, \"{n}\");",
            n = name,
            v = value
        )
        .unwrap();
    }
    for (name, args, ret) in sys::FUNCTIONS {
        let args: Vec<String> = args.iter().map(|a| c_type(a)).collect();
        let args = if args.is_empty() {
            "void".into()
        } else {
            args.join(", ")
        };
        writeln!(
            c,
            "_Static_assert(__builtin_types_compatible_p(__typeof__(&{n}), \
             {r} (*)({a})), \"{n}\");",
            n = name,
            r = c_type(ret),
            a = args
        )
        .unwrap();
    }
    c
}

/// 0 if the compiler takes the file, else its messages.
fn compile(source: &str, include: &PathBuf) -> Option<Result<(), String>> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    static N: AtomicUsize = AtomicUsize::new(0);
    let file = std::env::temp_dir().join(format!(
        "ncb-sys-{}-{}.c",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&file, source).unwrap();
    let out = Command::new(&cc)
        .args(["-std=gnu11", "-fsyntax-only", "-D_GNU_SOURCE", "-I"])
        .arg(include)
        .arg(&file)
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            let _ = std::fs::remove_file(&file);
            eprintln!("SKIP: no C compiler ({}): {}", cc, e);
            return None;
        }
    };
    let _ = std::fs::remove_file(&file);
    Some(if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    })
}

#[test]
fn mirror_matches_the_header() {
    let include = match include_dir() {
        Some(d) => d,
        None => return,
    };
    if let Some(r) = compile(&asserts(None), &include) {
        r.unwrap();
    }
}

#[test]
fn a_wrong_mirror_is_caught() {
    let include = match include_dir() {
        Some(d) => d,
        None => return,
    };
    if let Some(r) = compile(&asserts(Some("ncb_near.hi")), &include) {
        let err = r.unwrap_err();
        assert!(err.contains("ncb_near.hi"), "{}", err);
    }
}

#[test]
fn a_wrong_type_is_caught() {
    let include = match include_dir() {
        Some(d) => d,
        None => return,
    };
    if let Some(r) = compile(&asserts(Some("off_t")), &include) {
        let err = r.unwrap_err();
        assert!(err.contains("off_t"), "{}", err);
    }
}

/// The constants of a header: its enums' members and its numeric
/// `#define`s, but the library's own (`NCB__`).
fn header_constants(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in text.lines() {
        let (l, define) = match line.strip_prefix("#define ") {
            Some(rest) => (rest, true),
            None => (line.trim_start(), false),
        };
        let end = l
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(l.len());
        let (name, rest) = l.split_at(end);
        let rest = rest.trim_start();
        let value = if define {
            rest.starts_with(|c: char| c.is_ascii_digit())
        } else {
            line.starts_with(char::is_whitespace)
                && (rest.starts_with('=') || rest.starts_with(','))
        };
        if name.starts_with("NCB_") && !name.starts_with("NCB__") && value {
            names.push(name.to_string());
        }
    }
    names
}

#[test]
fn every_constant_of_the_header_is_mirrored() {
    let include = match include_dir() {
        Some(d) => d,
        None => return,
    };
    let mut names = Vec::new();
    for h in ["noclobber.h", "noclobber_core.h"] {
        let text = std::fs::read_to_string(include.join(h)).unwrap();
        names.extend(header_constants(&text));
    }
    assert!(
        names.len() > 30,
        "{} constants found: {:?}",
        names.len(),
        names
    );
    let missing: Vec<_> = names
        .iter()
        .filter(|n| !sys::CONSTANTS.iter().any(|(c, _)| c == n))
        .collect();
    assert!(missing.is_empty(), "not mirrored: {:?}", missing);
}

#[test]
fn every_function_of_the_header_is_declared() {
    let include = match include_dir() {
        Some(d) => d,
        None => return,
    };
    let header = std::fs::read_to_string(include.join("noclobber.h")).unwrap();
    let mut missing = Vec::new();
    let mut count = 0;
    for decl in header.lines().filter_map(|l| l.strip_prefix("NCB_API ")) {
        let head = decl.split('(').next().unwrap();
        let name = head.rsplit(|c: char| c == ' ' || c == '*').next().unwrap();
        count += 1;
        if !sys::FUNCTIONS.iter().any(|(n, _, _)| *n == name) {
            missing.push(name.to_string());
        }
    }
    assert!(count > 50, "{} functions found in the header", count);
    assert!(missing.is_empty(), "not declared: {:?}", missing);
    assert_eq!(
        count,
        sys::FUNCTIONS.len(),
        "declared but not in the header"
    );
}

#[test]
fn the_library_is_the_headers_version() {
    let v = unsafe { sys::ncb_version() };
    assert_eq!(
        v,
        sys::NCB_VERSION_MAJOR << 16
            | sys::NCB_VERSION_MINOR << 8
            | sys::NCB_VERSION_PATCH
    );
}
