# SPDX-License-Identifier: GPL-2.0-only
#
# Developer targets. The kbuild side of the module is src/Kbuild and Kconfig.
#
#   make run      build what is missing, boot the test kernel, show the module at work
#   make shell    interactive shell in the same VM, module loaded (VARIANT=ref for C)
#   make check    every test: host, then the VMs; non-zero exit on any failure
#   make kernel   build both kernel variants (test, ref)
#   make deps     install the build dependencies
#   make fuzz     run the fuzz target for FUZZ_SECONDS (default 300); new finds go to fuzz/corpus
#   make bench    host benchmark of the probe language (see BENCHMARKS.md)
#   make bench-vm C and the module side by side in the ref VM under -icount (VARIANT=: another ref variant)
#   make bench-vm-arm64  the same on the arm64 ref kernel
#   make bench-memory  memory per probe and bulk create/remove, C and module
#   make bench-create  instructions to define a probe (plain, BTF), C and module, -icount
#   make bench-core  the core's record path, C against C: pristine 7.3 against the series (KERNEL=6.12: 6.12)
#   make profile  where a hit's instructions go: make profile SPEC='p a=%di' [IMPL=--c]
#   make vectors  re-record tests/vectors/c-ref.txt and c-ref-7.3.txt from C (the variants make check
#                 runs the oracle on, scripts/variants.tsv: ref, ref-7.3)
#   make series   the patch series against pristine 6.12 into build/series (git format-patch);
#                 KERNEL=7.3: against pristine 7.3 (patches/7.3/series)
#   make apply KDIR=...  apply the series to your own 6.12 or 7.3 tree (the tree's own; git am if it is a git tree)
#   make checkpatch  scripts/checkpatch.pl --strict on the series, and the git am path (KERNEL=7.3: the 7.3 series)
#   make series-build  build the series patch by patch (each step builds, no new warning; about 12 minutes; KERNEL=7.3 too)
#   make clean    remove build/ and target/ (the cache under ~/.cache stays)

VARIANT ?= test
KERNEL ?= 6.12

FUZZ_SECONDS ?= 300

.PHONY: run shell check kernel deps host-test fuzz bench bench-vm bench-vm-arm64 bench-memory bench-create bench-core profile stale-int3 race-broken vectors series apply checkpatch series-build clean

run:
	@bash scripts/run.sh

shell:
	@bash scripts/kernel.sh $(VARIANT)
	@bash scripts/vm.sh --shell $(VARIANT)

check:
	@bash scripts/check.sh

kernel:
	@bash scripts/kernel.sh test
	@bash scripts/kernel.sh ref

deps:
	@bash scripts/deps.sh

host-test:
	@cargo test --locked

fuzz:
	@bash scripts/fuzz.sh $(FUZZ_SECONDS)

bench:
	@cargo run --release --locked --example bench

bench-vm:
	@bash scripts/bench-vm.sh $(VARIANT)

# The variant table's lookups (scripts/lib.sh is bash).
LIB = bash -c '. scripts/lib.sh && "$$@"' lib

bench-vm-arm64:
	@bash scripts/bench-vm.sh $$($(LIB) variants arch=arm64 kind=ref | head -1)

bench-memory:
	@bash scripts/bench-memory.sh

bench-create:
	@bash scripts/bench-create.sh

# (KERNEL only when given: KERNEL ?= 6.12 above would make 6.12 the default.)
bench-core:
	@bash scripts/bench-core.sh $(if $(filter command line environment,$(origin KERNEL)),$(KERNEL))

# The kretprobe-oops experiment (README): the race on test and ref kernels
# that count unclaimed int3 traps, SECS of it on each.
SECS ?= 1200
stale-int3:
	@bash scripts/stale-int3.sh $(SECS) test ref

race-broken:
	@bash scripts/kernel.sh debug >/dev/null && bash scripts/race-broken.sh

SPEC ?= p a=%di
profile:
	@bash scripts/kernel.sh ref >/dev/null && mkdir -p build/bin && gcc -O2 -static -o build/bin/getppid_loop tests/bench/getppid_loop.c && python3 scripts/profile-vm.py $(IMPL) '$(SPEC)'

vectors:
	@set -e; for v in $$($(LIB) stage_variants oracle); do \
		bash scripts/kernel.sh $$v; bash scripts/oracle.sh record $$v; done

series:
	@RKPE_KVER=$(KERNEL) bash scripts/series.sh --sizes

apply:
	@test -n "$(KDIR)" || { echo "usage: make apply KDIR=/path/to/linux-6.12-or-7.3"; exit 1; }
	@bash scripts/apply.sh "$(KDIR)"

checkpatch:
	@RKPE_KVER=$(KERNEL) bash scripts/series-check.sh

series-build:
	@RKPE_KVER=$(KERNEL) bash scripts/series-build.sh $(if $(FORCE),--force)

clean:
	rm -rf build target
