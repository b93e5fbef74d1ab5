// Package query answers the questions ibkey's commands ask ("all ports with their
// tables", "resolve this endpoint") by turning raw facts from ibverbs into views that
// carry the meaning check gives them.
package query

import (
	"fmt"
	"strings"
)

// UsageError is bad input from the user (exit code 2): it names the bad token and what
// is accepted.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

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
