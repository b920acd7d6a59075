//! jit_call: generated code that calls the runtime with the machine's
//! direct call (x86-64's call rel32, aarch64's BL), so it must lie within
//! that call's reach of the runtime, both ways: a reservation asked for
//! just that, one page committed writable, the code written, made
//! executable and run.  It calls `runtime_add(40, 2)`.
//!
//!     cargo run --example jit_call
use noclobber::{Prot, Reach, Reservation, ReserveOptions};

extern "C" fn runtime_add(a: i32, b: i32) -> i32 {
    a + b
}

/// Code that calls `f(40, 2)` and returns what it returns, for code at
/// `at`; empty where there is no emitter for this machine.
#[allow(unused_variables)]
fn emit(at: u64, f: u64) -> Vec<u8> {
    #[allow(unused_mut)]
    let mut code = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        // sub rsp, 8; mov edi, 40; mov esi, 2
        code.extend_from_slice(&[0x48, 0x83, 0xec, 0x08]);
        code.extend_from_slice(&[0xbf, 40, 0, 0, 0, 0xbe, 2, 0, 0, 0]);
        // call rel32, counted from the next instruction
        let next = at + code.len() as u64 + 5;
        let rel = i32::try_from(f.wrapping_sub(next) as i64)
            .expect("the reservation is within rel32 reach");
        code.push(0xe8);
        code.extend_from_slice(&rel.to_le_bytes());
        // add rsp, 8; ret
        code.extend_from_slice(&[0x48, 0x83, 0xc4, 0x08, 0xc3]);
    }
    #[cfg(target_arch = "aarch64")]
    {
        // bl: imm26 words from this instruction, the fourth
        let words = (f.wrapping_sub(at + 12) as i64) >> 2;
        assert!((-(1 << 25)..1 << 25).contains(&words), "within B reach");
        let bl = 0x94000000 | (words as u32 & 0x3ff_ffff);
        // stp x29, x30, [sp, #-16]!; mov w0, #40; mov w1, #2; bl;
        // ldp x29, x30, [sp], #16; ret
        let words = [0xa9bf7bfd, 0x52800500, 0x52800041, bl, 0xa8c17bfd];
        for w in words.iter().chain(&[0xd65f03c0u32]) {
            code.extend_from_slice(&w.to_le_bytes());
        }
    }
    code
}

/// The instruction cache sees what was written as data.
#[allow(unused_variables)]
fn sync_caches(code: &[u8]) {
    #[cfg(target_arch = "aarch64")]
    for p in code.chunks(4) {
        // SAFETY: cache maintenance of our own bytes.
        unsafe {
            std::arch::asm!(
                "dc cvau, {0}", "dsb ish", "ic ivau, {0}", "dsb ish", "isb",
                in(reg) p.as_ptr()
            );
        }
    }
}

fn main() -> Result<(), noclobber::Error> {
    let f = runtime_add as usize as u64;
    let reach = Reach::branch();
    let fig = reach.figures()?;
    let opts = ReserveOptions {
        near: Some((f..f + 64, reach)),
        place: noclobber::Place::Random,
        ..Default::default()
    };
    let space = Reservation::with_options(1 << 20, &opts)?;
    println!(
        "{} reaches [{}, {:+}]; runtime_add at {:#x}, code at {:#x}, \
         {:+} KiB away",
        fig.name,
        fig.min,
        fig.max,
        f,
        space.addr(),
        (space.addr() as i64 - f as i64) / 1024
    );
    let mut page = space.commit(0, 4096, Prot::READ | Prot::WRITE)?;
    let code = emit(page.addr() as u64, f);
    if code.is_empty() {
        println!("no code generator for this machine");
        return Ok(());
    }
    let bytes = page.as_mut_slice().expect("writable");
    bytes[..code.len()].copy_from_slice(&code);
    sync_caches(&bytes[..code.len()]);
    page.protect(Prot::READ | Prot::EXEC)?;
    // SAFETY: the page holds a whole function of the C ABI, executable,
    // and lives as long as `page`.
    let run: extern "C" fn() -> i32 =
        unsafe { std::mem::transmute(page.as_ptr()) };
    println!("generated code: runtime_add(40, 2) = {}", run());
    Ok(())
}
