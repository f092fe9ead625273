# Top-level entry points. `make test` is the README's test command.
.PHONY: build build-plain sw test clean

# target/release/nanopu, built with profile-guided optimization (scripts/build-pgo).
build: sw
	./scripts/build-pgo

# target/release/nanopu without a profile: a quicker build, slower runs, the same results.
build-plain: sw
	cargo build --release

sw:
	$(MAKE) -C sw

# Into a target directory of its own, so that the tests' build never replaces the binary
# `make build` made.
test: sw
	cargo test --release --workspace --target-dir target/test

clean:
	$(MAKE) -C sw clean
	cargo clean
