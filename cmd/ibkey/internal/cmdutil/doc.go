// Package cmdutil is the plumbing every ibkey command shares: the IO streams, the
// Factory of lazily built dependencies (host, output format, colour, the process
// context), errors and exit codes, the MAD transport flags, table/plain/JSON rendering
// and notices on stderr. It holds no command; commands live in one package per noun
// beside it (cmd/ibkey/internal/devices, pkeys, ...), and cmd/ibkey/root.go assembles
// them.
package cmdutil
