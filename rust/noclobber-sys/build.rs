//! Where libnoclobber is: NOCLOBBER_LIB_DIR (a build directory of the
//! tree, say build/native), else the system's library path.  With
//! NOCLOBBER_STATIC=1 the static library is linked, so that the programs
//! need no library path at run time (a cross build run under qemu-user).
use std::env;

fn main() {
    println!("cargo:rerun-if-env-changed=NOCLOBBER_LIB_DIR");
    println!("cargo:rerun-if-env-changed=NOCLOBBER_STATIC");
    if let Ok(dir) = env::var("NOCLOBBER_LIB_DIR") {
        println!("cargo:rustc-link-search=native={}", dir);
    }
    if env::var("NOCLOBBER_STATIC").map_or(false, |v| v == "1") {
        println!("cargo:rustc-link-lib=static=noclobber");
    } else {
        println!("cargo:rustc-link-lib=dylib=noclobber");
    }
}
