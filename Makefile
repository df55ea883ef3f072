# SPDX-License-Identifier: GPL-2.0-only
#
# Developer targets. The kbuild side of the module is src/Kbuild and Kconfig.
#
#   make run      build what is missing, boot the test kernel, show the module at work
#   make shell    interactive shell in the same VM, module loaded (VARIANT=ref for C)
#   make check    every test: host, then the VMs; non-zero exit on any failure
#   make kernel   build both kernel variants (test, ref)
#   make deps     install the build dependencies
#   make clean    remove build/ and target/ (the cache under ~/.cache stays)

VARIANT ?= test

.PHONY: run shell check kernel deps host-test clean

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

clean:
	rm -rf build target
