#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make run`: build what is missing, boot the test kernel, run guest/demo.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
variant=${VARIANT:-$(variants kind=test | head -1)}
bash "$ROOT/scripts/kernel.sh" "$variant"
stage "boot $variant and run the demo"
bash "$ROOT/scripts/vm.sh" --timeout 300 "$variant" -- 'sh /rkpe/guest/demo.sh' | drop_kmsg
done_stage
