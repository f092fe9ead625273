# Top-level entry points. `make test` is the README's test command.
.PHONY: build build-plain sw test fuzz-smoke lint python python-test clean

# target/release/nanopu, built with profile-guided optimization (scripts/build-pgo).
build: sw
	./scripts/build-pgo

# target/release/nanopu without a profile: a quicker build, slower runs, the same results.
build-plain: sw
	cargo build --release

sw:
	$(MAKE) -C sw

# Into a target directory of its own, so that the tests' build never replaces the binary
# `make build` made; with the `fast` profile (Cargo.toml: no LTO, the same results). With
# MPI (`mpirun` runs across ranks are tested, docs/parallel.md); every cargo command of the
# tests' build names the same features, so that none rebuilds what another built.
FEATURES = --features nanopu-cli/mpi

test: sw
	cargo test --profile fast --workspace --target-dir target/test $(FEATURES)
	$(MAKE) fuzz-smoke lint python-test

# The Python package (crates/py, docs/python.md), built by maturin with the `fast` profile
# (no LTO: a few minutes on two cores) and installed with pip.
python:
	./scripts/pip-install --no-build-isolation --force-reinstall --no-deps ./crates/py

# Its tests (pytest), on the C programs of sw/build; -rs prints why a test was skipped.
python-test: sw python
	python3 -m pytest -q -rs crates/py/tests

# Clippy on every target, warnings as errors (docs/reliability.md, static checks), and no
# import cycle between sibling modules of a crate (docs/architecture.md, "The map").
lint:
	cargo clippy --workspace --all-targets --target-dir target/test $(FEATURES) -- -D warnings
	./scripts/module-cycles

# Every fuzz target's stable-Rust driver for NANOPU_FUZZ_SECS seconds (default 20), on the
# tests' build (fuzz/README.md): about a minute, two targets at a time.
fuzz-smoke: sw
	cargo test --profile fast --workspace --target-dir target/test $(FEATURES) --tests fuzz_smoke -- --ignored

clean:
	$(MAKE) -C sw clean
	cargo clean
