# Top-level entry points. `make test` is the README's test command.
.PHONY: build sw test clean

build: sw
	cargo build --release

sw:
	$(MAKE) -C sw

test: sw
	cargo test --release --workspace

clean:
	$(MAKE) -C sw clean
	cargo clean
