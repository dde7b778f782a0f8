# Thin wrapper over CMake presets. `make run` and `make test` set everything up first.
JOBS ?= $(shell nproc)
FIXTURES ?= $(abspath ../shared/fixtures)
BIN := build/release/bin/paddock

.PHONY: setup build run test test-fast test-sanitize fuzz bench format clean

setup:
	@scripts/setup

build: setup
	@cmake --preset release -DPADDOCK_WERROR=$${PADDOCK_WERROR:-OFF} >/dev/null
	@cmake --build --preset release -j $(JOBS)

run: build
	@scripts/run

# Unit + golden tests (release), then unit + golden under ASan/UBSan, then every fuzz target.
test: build
	@scripts/test

test-fast: build
	@cd build/release && ctest --output-on-failure -j $(JOBS) -LE "slow|fuzz"

bench: build
	@$(BIN) bench --shape llama3.2-1b --type q4_k_m

format:
	@find src tests bench -name '*.h' -o -name '*.cpp' | xargs clang-format -i

clean:
	@rm -rf build
