// Package query answers the questions ibkey's commands ask ("all ports with their
// tables", "resolve this endpoint") by turning raw facts from ibverbs into views that
// carry the meaning check gives them.
package query

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ibkey/ibkey/internal/fabric"
)

// UsageError is bad input from the user (exit code 2): it names the bad token and what
// is accepted. Err, when set, is the typed error it reports (e.g. *FabricFileError), for
// errors.As.
type UsageError struct {
	Msg string
	Err error
}

func (e *UsageError) Error() string { return e.Msg }

// Unwrap returns Err.
func (e *UsageError) Unwrap() error { return e.Err }

// FabricFileError is a saved sweep (a fabric file) that could not be read or is not a
// fabric file. Its text names the file, not the flag that named it: the command adds
// that (cmdutil.ReadFabricFile: --fabric-file).
type FabricFileError struct {
	// Path is the file, "" when it could not be opened (then Err names it).
	Path string
	// Err is why: the open's error, a *fabric.FabricFileError, or the decoder's.
	Err error
}

func (e *FabricFileError) Error() string {
	if e.Path == "" {
		return e.Err.Error()
	}
	var fe *fabric.FabricFileError
	if errors.As(e.Err, &fe) {
		return e.Path + ": " + fe.Problem
	}
	return e.Path + ": " + e.Err.Error()
}

// Unwrap returns Err.
func (e *FabricFileError) Unwrap() error { return e.Err }

// NotFoundError is a device or port that does not exist (exit code 3), with what does.
type NotFoundError struct {
	What      string // "device", "port"
	Name      string // "mlx5_9", "3 on mlx5_0"
	Available []string
}

func (e *NotFoundError) Error() string {
	avail := "none"
	if len(e.Available) > 0 {
		avail = strings.Join(e.Available, ", ")
	}
	plural := e.What + "s"
	return fmt.Sprintf("no %s %s (%s: %s)", e.What, e.Name, plural, avail)
}

// EnvError is an environment problem (exit code 3): no sysfs, no RDMA devices,
// permission denied.
type EnvError struct{ Msg string }

func (e *EnvError) Error() string { return e.Msg }
