// Package faults is ibkey's fault-injection suite (`make faults`, and a short run in
// CI). It builds the ibkey binary and runs it like an admin would, while the suite
// stalls (SIGSTOP), kills and restarts the ibsim simulator under it, sends it SIGINT,
// SIGTERM, SIGHUP and SIGQUIT at random moments (also to the watch screen on a pty),
// hands it FIFOs, /dev/zero, directories, huge sparse files and hostile text at every
// input, and checks what must always hold: every process exits within a generous
// deadline (no hang), no simulator client slot is left held, no crash or goroutine
// dump, no escape sequence reaches the output, a partial answer never exits 0, and the
// screen leaves the terminal as it found it (stty modes, main screen, cursor shown).
// The exporter is served to hostile clients (stalled bodies, unread answers and
// pipelines, 1,000 idle connections, plain HTTP to its TLS port, every method), its
// textfile directory taken away, and its simulator killed and restarted or its client
// slot dropped: scrapes go on, idle connections are closed, and fabric mode heals
// (exporter_test.go, run in parallel with one another).
//
// The suite runs only with IBKEY_FAULTS=1 (`make faults` sets it; a plain go test ./...
// skips it). The number of rounds per command class is the -rounds flag (`make faults`
// passes FAULT_ROUNDS, 200 by default; CI passes 6). Each test logs the counts of every
// outcome (go test -v).
package faults
