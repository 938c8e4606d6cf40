//go:build unix

package run

import "syscall"

// fileLimit returns RLIMIT_NOFILE's soft and hard limits (0, 0 if unknown).
func fileLimit() (soft, hard uint64) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, 0
	}
	return uint64(r.Cur), uint64(r.Max)
}

// raiseFileLimit raises the soft open-file limit to n (at most the hard limit).
func raiseFileLimit(n uint64) error {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return err
	}
	r.Cur = min(max(r.Cur, n), r.Max)
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r)
}
