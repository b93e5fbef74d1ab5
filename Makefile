# ibkey — see README.md. Every target works from a clean checkout with Go installed.
PREFIX     ?= /usr/local
DESTDIR    ?=
BINDIR     := $(DESTDIR)$(PREFIX)/bin
MANDIR     := $(DESTDIR)$(PREFIX)/share/man/man1
BASHCOMPDIR := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR := $(DESTDIR)$(PREFIX)/share/zsh/site-functions
FISHCOMPDIR := $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d

VERSION    ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GO         ?= go
LDFLAGS    := -s -w -X main.stampedVersion=$(VERSION)
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
DEADCODE   := golang.org/x/tools/cmd/deadcode@v0.52.0
export CGO_ENABLED ?= 0

.PHONY: all build test bench bench-smoke lint golden completions man fixtures install uninstall demo clean fabric-test truth build-static kernel-test faults

all: build

## build: bin/ibkey, the one complete ibkey (every command). On linux/amd64 and arm64 it
## loads libibverbs at run time through purego for the verbs counters, so it needs glibc's
## loader (not libibverbs itself).
build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/ibkey ./cmd/ibkey

## build-static: the same ibkey without the run-time libibverbs loader (build tag
## ibkey_static) and without cgo (with a C compiler present, Go would otherwise link
## libc dynamically for net and os/user): fully static, for hosts without glibc; the
## violation counters a port has are then not read through verbs (n/a naming the static
## build, exit 4, unless PortInfo over MADs reads them).
build-static:
	CGO_ENABLED=0 $(GO) build -trimpath -tags ibkey_static -ldflags '$(LDFLAGS)' -o bin/ibkey ./cmd/ibkey

## kernel-test: the real-kernel tests (one QEMU boot of Debian's kernel with rdma_rxe),
## with CI=true so they fail instead of skipping; install with scripts/kernel-lab install.
kernel-test:
	CI=true $(GO) test -count=1 ./internal/kernellab/

## test: every test (scripts/test), fuzz seed corpora included; lab tests skip with a
## hint when the simulator packages are missing (under CI=true they fail instead), and
## the summary at the end lists what was skipped and why.
test:
	scripts/test

## fabric-test: the simulated-fabric (lab) tests only, with CI=true so none of them skips.
fabric-test:
	CI=true $(GO) test -run 'Lab|Fabric' -count=1 ./...

## faults: the fault-injection suite (internal/faults) against the built binary: ibsim
## stalled, killed and restarted under discover, pkeys and watch; SIGINT/TERM/HUP/QUIT at
## random moments, also to the watch screen on a pty (terminal restored); FIFOs,
## /dev/zero, huge files and escape sequences at every input. FAULT_ROUNDS rounds per
## command class (default 200; CI runs a few). FAULT_SKIP is a go test -skip pattern.
FAULT_ROUNDS ?= 200
FAULT_SKIP ?=
faults:
	IBKEY_FAULTS=1 CI=true $(GO) test -count=1 -timeout 120m -v -skip '$(FAULT_SKIP)' ./internal/faults -args -rounds=$(FAULT_ROUNDS)

## truth: soak the partitions model (OpenSM) and fabric diff (ibnetdiscover) on generated cases
## and sequences of files, by an OpenSM daemon and by new processes (N=200 topologies by
## default), then through the fabric sweep and fabric check; prints the counts and the
## disagreements.
truth:
	scripts/truth

## bench: Go benchmarks (-benchmem; the MAD loop is BenchmarkLabExchange, the sweep
## BenchmarkLabSweep, the pkeys read/render path BenchmarkPKeys4096, BenchmarkLoadLarge,
## BenchmarkWritePlain16x2x128), then whole-process comparisons with the reference tools, paired,
## from tmpfs: the sweep at 512, 2,000 and 5,004 nodes against ibnetdiscover with CPU
## per MAD (scripts/bench-sweep), start-up against a Go hello world and pkeys --all against
## grep -r (scripts/bench-startup), partitions check/show/matrix against whole `opensm -o`
## runs at 2k/20k/100k ports (scripts/bench-partitions), sm log on 1 GB OpenSM logs
## against grep -c P_Key (scripts/bench-smlog), then one summary of every target.
## Needs hyperfine, ibsim-utils, opensm, infiniband-diags.
## bench-smoke: every testing.B once (-benchtime 1x), so a benchmark that no longer runs
## fails CI instead of the next `make bench` (BenchmarkHostRSS10k scrapes 10,000 times by
## design and internal/kernellab boots QEMU: both left to make bench and make test).
bench-smoke:
	CI=true $(GO) test -run '^$$' -bench . -benchtime 1x -skip 'BenchmarkHostRSS10k' $$($(GO) list ./... | grep -v /internal/kernellab)

bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./...
	mkdir -p .bench && : >.bench/summary.txt
	BENCH_SUMMARY=$(CURDIR)/.bench/summary.txt scripts/bench
	BENCH_SUMMARY=$(CURDIR)/.bench/summary.txt scripts/bench-startup
	BENCH_SUMMARY=$(CURDIR)/.bench/summary.txt scripts/bench-fabric
	BENCH_SUMMARY=$(CURDIR)/.bench/summary.txt scripts/bench-sweep
	BENCH_SUMMARY=$(CURDIR)/.bench/summary.txt scripts/bench-partitions
	BENCH_SUMMARY=$(CURDIR)/.bench/summary.txt scripts/bench-exporter
	BENCH_SUMMARY=$(CURDIR)/.bench/summary.txt scripts/bench-smlog
	@echo "== summary (issue 15 targets; paired runs: median, min, max; load = 1-minute average)"
	@cat .bench/summary.txt

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	@out=$$($(GO) run $(DEADCODE) -test=false ./cmd/ibkey); if [ -n "$$out" ]; then echo "deadcode: unreachable functions in the shipped binary:"; echo "$$out"; exit 1; fi
	GOOS=darwin $(GO) build ./...

## golden: rewrite golden files and the documents' examples after an intended output
## change (review the diff!).
golden:
	$(GO) test ./... -update

completions man:
	$(GO) test ./cmd/ibkey -run TestGeneratedFilesFresh -update

## fixtures: rewrite the fixture sysfs trees and the embedded demo host from their specs.
## testdata/sysfs/rxe is a tree the kernel wrote (scripts/save-sysfs), not generated: kept.
FIXTURES = mlx5 simulator cantalk dangling odd
fixtures:
	rm -rf $(addprefix testdata/sysfs/,$(FIXTURES)) internal/demo/host
	mkdir -p testdata/sysfs
	for f in $(FIXTURES); do $(GO) run ./internal/tools/mkhost -fixture $$f -o testdata/sysfs/$$f || exit 1; done
	$(GO) run ./internal/tools/mkhost -fixture demo -o internal/demo/host

install: build
	install -d $(BINDIR) $(MANDIR) $(BASHCOMPDIR) $(ZSHCOMPDIR) $(FISHCOMPDIR)
	install -m 0755 bin/ibkey $(BINDIR)/ibkey
	install -m 0644 man/*.1 $(MANDIR)/
	install -m 0644 completions/ibkey.bash $(BASHCOMPDIR)/ibkey
	install -m 0644 completions/_ibkey $(ZSHCOMPDIR)/_ibkey
	install -m 0644 completions/ibkey.fish $(FISHCOMPDIR)/ibkey.fish
	@[ -f /usr/share/bash-completion/bash_completion ] || echo "note: bash loads the completion in $(BASHCOMPDIR) only with the bash-completion package (apt-get install bash-completion)"

uninstall:
	rm -f $(BINDIR)/ibkey $(BASHCOMPDIR)/ibkey $(ZSHCOMPDIR)/_ibkey $(FISHCOMPDIR)/ibkey.fish
	rm -f $(addprefix $(MANDIR)/,$(notdir $(wildcard man/*.1)))

## demo: ibkey on the embedded demo host (no hardware needed).
demo: build
	bin/ibkey --demo devices -o table
	@echo
	bin/ibkey --demo pkeys -o table
	@echo
	bin/ibkey --demo decode pkey 0x8001 0x0001 -o table

clean:
	rm -rf bin .bench
