#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make fuzz`: run the libFuzzer target for a bounded time (seconds, $1).
# New inputs that reach new code are kept in fuzz/corpus/probe (commit them:
# `cargo test` replays the corpus); a crash stops the run and leaves the
# input in fuzz/artifacts/.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
secs=${1:-300}
if ! cargo fuzz --version 2>/dev/null | grep -q '0.13'; then
	stage "cargo install cargo-fuzz 0.13.2"
	cargo install --locked --quiet cargo-fuzz --version 0.13.2
	done_stage
fi
cd "$ROOT/fuzz"
stage "fuzz probe for ${secs}s"
RUSTC_BOOTSTRAP=1 cargo fuzz run probe corpus/probe -- -max_total_time="$secs" -max_len=4096
done_stage
