//go:build !unix

package main

import tea "charm.land/bubbletea/v2"

// watchResize has nothing to watch where there is no SIGWINCH: bubbletea reads the
// console's size itself.
func watchResize(*tea.Program) (stop func()) { return func() {} }
