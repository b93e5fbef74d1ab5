//go:build !unix

package tui

import tea "charm.land/bubbletea/v2"

// jobControl: there is no SIGTSTP outside Unix.
type jobControl struct{}

func newJobControl() *jobControl { return &jobControl{} }

func (*jobControl) filter(_ tea.Model, msg tea.Msg) tea.Msg { return msg }

func (*jobControl) start(*tea.Program) (stop func()) { return func() {} }
