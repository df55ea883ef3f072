// SPDX-License-Identifier: GPL-2.0-only

//! libFuzzer target over parse → compile → run → print (see host/fuzz.rs).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    rkpe_probe::fuzz::run(data);
});
